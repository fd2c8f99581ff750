# Third-party dependencies, all from Debian 12 packages (see the Makefile's package list).
# zstd and xxHash are found through pkg-config; fmt, nlohmann-json and GoogleTest through their
# CMake packages. nlohmann-json (header-only) reads the scene's map files; it is used only inside
# the library's .cc files, so installed consumers do not need it.
# libxxhash is linked for its run-time dispatch (XXH3 on the widest vector unit the CPU has).
find_package(PkgConfig REQUIRED)
pkg_check_modules(rolly_zstd REQUIRED IMPORTED_TARGET GLOBAL libzstd>=1.5)
pkg_check_modules(rolly_xxhash REQUIRED IMPORTED_TARGET GLOBAL libxxhash>=0.8)
find_package(fmt 9 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
