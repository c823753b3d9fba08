/* stb_image, implementation included, private to the including file (STB_IMAGE_STATIC), so it never
   clashes with the copy in librecio.a. Include it in one .c file only.
   Debian's stb_image 2.27 with STB_IMAGE_STATIC declares a function it never defines, and the file
   need not call every decoder: under -Werror those unused-function warnings would stop the build,
   though nothing is wrong. GCC reports "declared static but never defined" at the end of the file,
   after any pop, so the warning stays off for the rest of the including file. */
#ifndef RECIO_STB_IMAGE_PRIVATE_H
#define RECIO_STB_IMAGE_PRIVATE_H
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#include "stb_image.h"
#endif
