/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the writer thread's shared state (writer_state.h). */
#include "writer/writer_state.h"

ns_writer_state ns_ws;
