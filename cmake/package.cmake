# SPDX-License-Identifier: Apache-2.0
# Packages with CPack: DEB, RPM (where rpmbuild is installed) and TGZ
# (docs/install.md). `cpack` in the build directory writes all of them;
# `cpack -G DEB` one.
#
# What the files need at run time: libc (the plugin links only libc, libm,
# libpthread and libdl); json-c for ncclscope-sim and zlib for ncclscope,
# linked. The plugin dlopens libcurl (OTLP export) and zlib (gzip) when they
# are there and works without them: recommended, not required.
set(CPACK_PACKAGE_NAME ncclscope)
set(CPACK_PACKAGE_VENDOR ncclscope)
set(CPACK_PACKAGE_CONTACT "ncclscope maintainers" CACHE STRING "the packages' Maintainer / Packager field")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "NCCL profiler plugin you can leave on, trace tools and an NCCL-free simulator")
set(CPACK_PACKAGE_DESCRIPTION "libnccl-profiler-ncclscope.so records every NCCL collective, point-to-point,
proxy and network step in a compact per-process trace (NCCL_PROFILER_PLUGIN=ncclscope).
ncclscope exports and summarises traces; ncclscope-sim drives any NCCL profiler
plugin without NCCL or a GPU.")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_RESOURCE_FILE_README ${CMAKE_SOURCE_DIR}/README.md)
set(CPACK_PACKAGE_CHECKSUM SHA256)

find_program(NS_RPMBUILD rpmbuild)
set(CPACK_GENERATOR DEB TGZ)
if(NS_RPMBUILD)
  list(APPEND CPACK_GENERATOR RPM)
endif()

# DEB. The library directory is the configured one (/usr/lib from a default
# configure, /usr/lib/<multiarch> with -DCMAKE_INSTALL_PREFIX=/usr): the loader
# searches both, and CPack's maintainer scripts run ldconfig.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
find_program(NS_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(NS_FILE file)
if(NS_DPKG_SHLIBDEPS AND NS_FILE)
  # libc6, libjson-c5, zlib1g with their versions; CPack's postinst and postrm
  # then run ldconfig for a library in /usr/lib or a directory right below it
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  # without dpkg-shlibdeps (dpkg-dev) or file(1): the same names, no versions,
  # and dpkg's ldconfig trigger instead of the scripts
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libjson-c5, zlib1g")
  file(WRITE ${CMAKE_BINARY_DIR}/deb-control/triggers "activate-noawait ldconfig\n")
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/deb-control/triggers)
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcurl4 | libcurl4t64, zlib1g")

# RPM. Requires come from rpmbuild's scan of the ELF files; configure with
# the distribution's library directory (GNUInstallDirs picks lib64 on RPM
# systems) so that the plugin lands where their loader searches.
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_LICENSE Apache-2.0)
set(CPACK_RPM_PACKAGE_GROUP "Development/Tools")
set(CPACK_RPM_PACKAGE_SUGGESTS "libcurl, zlib")
set(CPACK_RPM_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")

include(CPack)
