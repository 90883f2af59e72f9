/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: storage of the session (written by src/runtime only). */
#include "session/session.h"

ns_session ns_sess;
