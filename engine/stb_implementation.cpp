// stb_image / stb_image_write compiled into the engine from Debian's libstb-dev headers,
// so binaries carry no libstb.so dependency onto bare GPU machines.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_FAILURE_USERMSG
#include <stb_image.h>
#include <stb_image_write.h>
