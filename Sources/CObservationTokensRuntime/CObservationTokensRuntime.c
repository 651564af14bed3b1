// The header's functions are `static inline`; this file defines the thread-local slots they use.
#include "CObservationTokensRuntime.h"

_Thread_local void *_Nullable ot_thread_slots[4];
