// Swift runtime entry points that ObservationTokens calls with the C calling convention they
// are exported with. Internal to the library (imported with `internal import`).
#ifndef C_OBSERVATION_TOKENS_RUNTIME_H
#define C_OBSERVATION_TOKENS_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

// Exported by the Swift runtime on every platform since ABI stability (HeapObject.h:
// `HeapObject *swift_tryRetain(HeapObject *)`): retains `object` and returns it, unless its
// deinit has begun; then returns NULL. (Declaring it as returning `bool` reads only the low
// byte of the pointer: a wrong answer for objects whose address ends in 0x00.)
extern void *swift_tryRetain(void *object);

/// Retains `object` unless its deinit has begun; returns whether it did.
static inline bool ot_tryRetain(void *object) {
    return swift_tryRetain(object) != NULL;
}

#endif
