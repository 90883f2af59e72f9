# SPDX-License-Identifier: Apache-2.0
# cmake --install: what goes where, by GNUInstallDirs (docs/install.md).
#
# The plugin is installed only as libnccl-profiler-ncclscope.so, the name NCCL
# builds from NCCL_PROFILER_PLUGIN=ncclscope. Never as the bare
# libnccl-profiler.so (the build tree's convenience link): NCCL dlopens that
# name when NCCL_PROFILER_PLUGIN is unset, so in a directory the loader
# searches it would profile every NCCL job on the host without anyone asking.
#
# The programs link no library of the project (the plugin is dlopened by
# name), so they are installed with no RPATH: nothing points back into the
# build tree, and ncclscope-sim finds a plugin by name through the loader's
# search path (LD_LIBRARY_PATH, ld.so.cache, the system directories), as
# libnccl does.
install(TARGETS nccl-profiler-ncclscope LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS ncclscope ncclscope-sim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# `ncclscope demo` of an installed tree finds the plugin from its own
# directory: BINDIR/NCCLSCOPE_BIN_TO_LIBDIR (../lib)/libnccl-profiler-ncclscope.so.
file(RELATIVE_PATH NS_BIN_TO_LIBDIR ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
target_compile_definitions(ncclscope PRIVATE NCCLSCOPE_BIN_TO_LIBDIR="${NS_BIN_TO_LIBDIR}")

# The manual pages, hand-written troff with the version filled in.
foreach(page ncclscope.1 ncclscope-sim.1 ncclscope.7)
  configure_file(${CMAKE_SOURCE_DIR}/man/${page}.in ${CMAKE_BINARY_DIR}/man/${page} @ONLY)
endforeach()
install(FILES ${CMAKE_BINARY_DIR}/man/ncclscope.1 ${CMAKE_BINARY_DIR}/man/ncclscope-sim.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_BINARY_DIR}/man/ncclscope.7 DESTINATION ${CMAKE_INSTALL_MANDIR}/man7)

# The README's relative links (docs/...) hold in share/doc/ncclscope too.
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# The Grafana dashboard and the Prometheus alert rules (docs/deploy.md).
install(FILES ${CMAKE_SOURCE_DIR}/deploy/grafana/ncclscope.json DESTINATION ${CMAKE_INSTALL_DATADIR}/ncclscope/grafana OPTIONAL)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/prometheus/ncclscope-rules.yml DESTINATION ${CMAKE_INSTALL_DATADIR}/ncclscope/prometheus
        OPTIONAL)
