# Installs the hybgen binary and a package config, so another project can
#   find_package(hybgen REQUIRED)
#   hybgen_add_model(TARGET m MODEL m.json)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS hybgen EXPORT hybgenTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(HYBGEN_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hybgen)
install(EXPORT hybgenTargets NAMESPACE hybgen:: DESTINATION ${HYBGEN_CMAKE_INSTALL_DIR})
configure_package_config_file(cmake/hybgenConfig.cmake.in ${PROJECT_BINARY_DIR}/hybgenConfig.cmake
                              INSTALL_DESTINATION ${HYBGEN_CMAKE_INSTALL_DIR})
# ARCH_INDEPENDENT: the package is a tool that runs on the build machine, so a
# cross-compiling project (a 32-bit microcontroller's) takes it too.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hybgenConfigVersion.cmake COMPATIBILITY SameMinorVersion
                                 ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/hybgenConfig.cmake ${PROJECT_BINARY_DIR}/hybgenConfigVersion.cmake
              cmake/HybgenAddModel.cmake
        DESTINATION ${HYBGEN_CMAKE_INSTALL_DIR})
