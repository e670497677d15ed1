# Installs the hybgen tool, the frontend library and a package config, so
# another project can
#   find_package(hybgen REQUIRED)
#   hybgen_add_model(TARGET m MODEL m.json)            # the tool, any project
#   target_link_libraries(app PRIVATE hybgen::runtime) # the frontend, host builds
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HYBGEN_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hybgen)

# Component "tool": the hybgen executable, which runs on the build machine.
install(TARGETS hybgen EXPORT hybgenTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT hybgenTargets NAMESPACE hybgen:: DESTINATION ${HYBGEN_CMAKE_INSTALL_DIR})

# Component "runtime": libhybgen and the headers its users include, laid out
# as in the source tree (include/hybgen/runtime-lite/hybgen.h,
# include/hybgen/ir/graph.h, ...). A separate export file, so that the config
# loads it only where the library can run (see hybgenConfig.cmake.in).
install(TARGETS hybgen_frontend EXPORT hybgenRuntimeTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT hybgenRuntimeTargets NAMESPACE hybgen:: DESTINATION ${HYBGEN_CMAKE_INSTALL_DIR})
foreach(header_dir ir io ops targets passes lower emit)
  install(DIRECTORY gen/${header_dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hybgen/${header_dir}
          FILES_MATCHING PATTERN "*.h")
endforeach()
install(FILES gen/pipeline.h gen/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hybgen)
install(DIRECTORY runtime-lite/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hybgen/runtime-lite FILES_MATCHING PATTERN "*.h")

# What the library was built for; the config compares it with the project
# that loads the package.
set(HYBGEN_RUNTIME_SYSTEM_NAME ${CMAKE_SYSTEM_NAME})
set(HYBGEN_RUNTIME_SYSTEM_PROCESSOR ${CMAKE_SYSTEM_PROCESSOR})
set(HYBGEN_RUNTIME_SIZEOF_VOID_P ${CMAKE_SIZEOF_VOID_P})
configure_package_config_file(cmake/hybgenConfig.cmake.in ${PROJECT_BINARY_DIR}/hybgenConfig.cmake
                              INSTALL_DESTINATION ${HYBGEN_CMAKE_INSTALL_DIR})
# ARCH_INDEPENDENT: the tool runs on the build machine, so a cross-compiling
# project (a 32-bit microcontroller's) takes the package too. The library is
# not architecture-independent; the config offers it only to projects built
# for the machine it was built for, instead of the version file refusing the
# whole package.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hybgenConfigVersion.cmake COMPATIBILITY SameMinorVersion
                                 ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/hybgenConfig.cmake ${PROJECT_BINARY_DIR}/hybgenConfigVersion.cmake
              cmake/HybgenAddModel.cmake
        DESTINATION ${HYBGEN_CMAKE_INSTALL_DIR})
