# `cmake --install build --prefix P` installs the command line, the headers,
# the libraries and how to find them:
#
#   P/bin/seam
#   P/include/seam/*.h              the planner's headers (and version.h)
#   P/include/seam/runtime/*.h      the executor's
#   P/lib/libseam_planner.a, libseam_runtime.a (and libseam_mpi.a with MPI)
#   P/lib/cmake/seam/               find_package(seam): seam::planner, seam::runtime, seam::mpi
#   P/lib/pkgconfig/seam-planner.pc, seam-runtime.pc
include(CMakePackageConfigHelpers)

set(seam_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/seam)
set(seam_targets seam_planner seam_runtime)
if(SEAM_WITH_MPI)
  list(APPEND seam_targets seam_mpi_backend)
endif()

install(TARGETS seam_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET seam_mpi_cli)
  install(TARGETS seam_mpi_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(TARGETS ${seam_targets} EXPORT seamTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(mpi_header_rule)
if(NOT SEAM_WITH_MPI)
  set(mpi_header_rule PATTERN mpi.h EXCLUDE)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/seam DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" ${mpi_header_rule})
install(FILES ${PROJECT_BINARY_DIR}/include/seam/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/seam)

install(EXPORT seamTargets NAMESPACE seam:: DESTINATION ${seam_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/seamConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/seamConfig.cmake INSTALL_DESTINATION ${seam_cmake_dir})
# 0.x: a minor release may change the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/seamConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/seamConfig.cmake ${PROJECT_BINARY_DIR}/seamConfigVersion.cmake
        DESTINATION ${seam_cmake_dir})

# pkg-config: static archives, so each file lists the libraries below it.
# The prefix is found from the file's own place, so that an install under
# any --prefix (or a moved one) finds itself.
file(RELATIVE_PATH seam_pc_prefix "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" seam_pc_prefix "${seam_pc_prefix}")
foreach(pc planner runtime)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/seam-${pc}.pc.in ${PROJECT_BINARY_DIR}/seam-${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/seam-${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
