# Installation: headers, the library, a CMake package (find_package(rolly) -> rolly::rolly) and a
# pkg-config file.
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/rolly
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h"
        PATTERN "internal" EXCLUDE
        PATTERN "*_test.h" EXCLUDE)

install(TARGETS rolly EXPORT rollyTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(ROLLY_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rolly)
install(EXPORT rollyTargets NAMESPACE rolly:: DESTINATION ${ROLLY_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rollyConfig.cmake.in
  ${PROJECT_BINARY_DIR}/rollyConfig.cmake INSTALL_DESTINATION ${ROLLY_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rollyConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rollyConfig.cmake ${PROJECT_BINARY_DIR}/rollyConfigVersion.cmake
        DESTINATION ${ROLLY_CMAKE_DIR})

configure_file(${PROJECT_SOURCE_DIR}/cmake/rolly.pc.in ${PROJECT_BINARY_DIR}/rolly.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rolly.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
