/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the atexit handler, the destructor and the termination signals
 * (exit.c), installed when a session starts and removed when it ends. */
#ifndef NCCLSCOPE_RUNTIME_EXIT_H
#define NCCLSCOPE_RUNTIME_EXIT_H

/* on_process_exit: what the atexit handler and the library destructor call
 * (the lifecycle's ns_runtime_process_exit). It stays registered after
 * ns_exit_hooks_remove: a destructor or atexit handler that runs after the
 * session ended calls it too, and it then finds nothing to end. */
void ns_exit_hooks_install(void (*on_process_exit)(void));
void ns_exit_hooks_remove(void);

#endif
