# Installation: headers, the library, a CMake package (find_package(rolly) -> rolly::rolly) and a
# pkg-config file.
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/rolly
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h"
        PATTERN "internal" EXCLUDE
        PATTERN "*_test.h" EXCLUDE
        PATTERN "*_test_util.h" EXCLUDE
        PATTERN "backend_conformance.h" EXCLUDE
        PATTERN "kill_payload.h" EXCLUDE
        PATTERN "format_test_util.h" EXCLUDE)

install(TARGETS rolly EXPORT rollyTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The PostgreSQL backend, when built, is exported with the library as rolly::postgres.
if(TARGET rolly_postgres)
  install(TARGETS rolly_postgres EXPORT rollyTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(ROLLY_HAS_POSTGRES ON)
else()
  set(ROLLY_HAS_POSTGRES OFF)
endif()

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
