// ROLLY_SCENE_ASAN: 1 when this file is compiled with AddressSanitizer (gcc or clang), else 0.

#ifndef ROLLY_SCENE_INTERNAL_SANITIZER_H_
#define ROLLY_SCENE_INTERNAL_SANITIZER_H_

#if defined(__SANITIZE_ADDRESS__)
#define ROLLY_SCENE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ROLLY_SCENE_ASAN 1
#endif
#endif
#ifndef ROLLY_SCENE_ASAN
#define ROLLY_SCENE_ASAN 0
#endif

#endif  // ROLLY_SCENE_INTERNAL_SANITIZER_H_
