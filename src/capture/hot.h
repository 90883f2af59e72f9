/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: NS_HOT marks the functions NCCL's threads run for every event
 * (the ABI adapters' start/stop/state and capture's). GCC and clang put
 * them in .text.hot, which the linker keeps together at the start of the
 * text: the hot path spans a page or two whatever the link order of the
 * libraries that hold it (measured: with its functions 68 KB apart, a
 * ProxyStep start + stop cost 3-5 ns more). */
#ifndef NCCLSCOPE_CAPTURE_HOT_H
#define NCCLSCOPE_CAPTURE_HOT_H

#define NS_HOT __attribute__((hot))

#endif
