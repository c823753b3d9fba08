/* The one translation unit that builds recio's implementation into librecio.a / librecio.so.
   stb_image's implementation lives inside recio.h's implementation (static, so it never clashes
   with a copy of stb in the user's program). */
#define RECIO_IMPLEMENTATION
#include "recio.h"
