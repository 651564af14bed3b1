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
extern void *_Nullable swift_tryRetain(void *_Nonnull object);

/// Retains `object` unless its deinit has begun; returns whether it did.
static inline bool ot_tryRetain(void *_Nonnull object) {
    return swift_tryRetain(object) != NULL;
}

/// Per-thread pointers of the library (which recording a getter reports to, which computed
/// properties are computing, which set collects `.immediate` checks): C thread-local storage,
/// a plain load or store, where `pthread_getspecific`/`pthread_setspecific` are calls (and a
/// lazily created key a `swift_once` check per use). Slots: see `ThreadSlot`.
extern _Thread_local void *_Nullable ot_thread_slots[4];

static inline void *_Nullable ot_thread_slot(int slot) {
    return ot_thread_slots[slot];
}

static inline void ot_set_thread_slot(int slot, const void *_Nullable value) {
    ot_thread_slots[slot] = (void *)value;
}

#endif
