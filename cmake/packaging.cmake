# Debian packages from the install components (`./run package`: cpack in build/packages/):
#   libscaleup-dev      the headers, the CMake package and scaleup.pc (architecture: all)
#   scaleup             the `scaleup` command
#   wireshark-scaleup   the Wireshark plugin, in Wireshark's own plugin directory
# Dependencies: the headers need Boost's (Boost.Endian) and, for pcap/, libpcap's headers; the
# binaries' shared-library dependencies are computed by dpkg-shlibdeps. Lintian's findings on the
# packages are listed in docs/packaging.md.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME scaleup)
set(CPACK_PACKAGE_VENDOR "scaleup")
set(CPACK_PACKAGE_CONTACT "scaleup maintainers <scaleup@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)  # debug information stays in the build tree

set(CPACK_COMPONENTS_ALL dev tool)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libscaleup-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libboost-dev (>= 1.74), libpcap-dev")
set(CPACK_DEBIAN_DEV_DESCRIPTION
  "Wire formats and transport state machines of XPU scale-up fabrics (headers)\n Header-only C++20 library: Scale-Up Ethernet (SUE, SUE Lite, the\n Reliability Header, AFH Gen 1 and Gen 2), Tofu-style packet slicing and\n an RDMA QoS block engine. Includes the CMake package and scaleup.pc.")
set(CPACK_DEBIAN_TOOL_PACKAGE_NAME scaleup)
set(CPACK_DEBIAN_TOOL_PACKAGE_SECTION net)
set(CPACK_DEBIAN_TOOL_DESCRIPTION
  "Write and dissect captures of XPU scale-up fabrics\n The scaleup command writes captures of Scale-Up Ethernet traffic (gen) and\n dissects and analyses captures (dump, stats), on the scaleup library.")
if(TARGET scaleup_wireshark)
  list(APPEND CPACK_COMPONENTS_ALL wireshark)
  set(CPACK_DEBIAN_WIRESHARK_PACKAGE_NAME wireshark-scaleup)
  set(CPACK_DEBIAN_WIRESHARK_PACKAGE_SECTION net)
  # Wireshark loads a plugin only into the major.minor it was built for (and from that
  # version's plugin directory): the package says which, both ends. dpkg-shlibdeps adds
  # libwireshark's soname package (libwireshark16 for 4.0, libwireshark18 for 4.4).
  math(EXPR scaleup_wireshark_next_minor "${Wireshark_MINOR_VERSION} + 1")
  set(CPACK_DEBIAN_WIRESHARK_PACKAGE_DEPENDS
      "wireshark-common (>= ${Wireshark_MAJOR_VERSION}.${Wireshark_MINOR_VERSION}), wireshark-common (<< ${Wireshark_MAJOR_VERSION}.${scaleup_wireshark_next_minor}~)")
  set(CPACK_DEBIAN_WIRESHARK_DESCRIPTION
    "Wireshark plugin for XPU scale-up fabrics\n Dissects Scale-Up Ethernet (SUE), SUE Lite, AFH Gen 1 and Gen 2, Tofu-style\n slices and RDMA QoS engine packets in Wireshark and tshark, with go-back-N\n sequence analysis, from the scaleup library's dissection engine.")
endif()
include(CPack)
