#ifndef CHEAPSTATS_H
#define CHEAPSTATS_H

#include <stddef.h>
#include <stdlib.h>  // defines __GLIBC__ and __GLIBC_MINOR__ (via <features.h>)

/// Bytes in use by malloc in the main arena plus mmapped chunks (glibc's mallinfo2():
/// uordblks + hblkhd), or -1 where mallinfo2() is not available. Swift's Glibc module doesn't
/// include <malloc.h>, hence this one-function C target.
long long cheapstats_heap_bytes_in_use(void);

#endif
