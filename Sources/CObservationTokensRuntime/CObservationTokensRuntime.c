// The header's functions are `static inline`; SwiftPM needs one source file per C target.
#include "CObservationTokensRuntime.h"
