# Debian packages from the install components (`./run package`: cpack in build/packages/):
#   libscaleup-dev      the headers, the CMake package and scaleup.pc (architecture: all)
#   scaleup             the `scaleup` command
#   wireshark-scaleup   the Wireshark plugin, in Wireshark's own plugin directory
#   libscaleup-c0       the C ABI's shared library (libscaleup_c.so.0)
#   libscaleup-c-dev    the C ABI's static library, link, CMake targets and scaleup-c.pc
# Dependencies: the headers need Boost's (Boost.Endian) and, for pcap/, libpcap's headers; the
# binaries' shared-library dependencies are computed by dpkg-shlibdeps. Lintian's findings on the
# packages are listed in docs/packaging.md.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME scaleup)
set(CPACK_PACKAGE_VENDOR "scaleup")
set(CPACK_PACKAGE_CONTACT "scaleup maintainers <scaleup@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Each package's description starts with its own synopsis line. CPackDeb puts the project's
# summary in front of every component's description unless the summary is CPack's default
# text, so the summary is left at that text (it is not shown anywhere else: DEB only).
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
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
  "Wire formats and transport state machines of XPU scale-up fabrics (headers)\nHeader-only C++20 library: Scale-Up Ethernet (SUE, SUE Lite, the\nReliability Header, AFH Gen 1 and Gen 2), Tofu-style packet slicing and\nan RDMA QoS block engine. Includes the CMake package and scaleup.pc.")
set(CPACK_DEBIAN_TOOL_PACKAGE_NAME scaleup)
set(CPACK_DEBIAN_TOOL_PACKAGE_SECTION net)
set(CPACK_DEBIAN_TOOL_DESCRIPTION
  "Write and dissect captures of XPU scale-up fabrics\nThe scaleup command writes captures of Scale-Up Ethernet traffic (gen) and\ndissects and analyses captures (dump, stats), on the scaleup library.")
if(TARGET scaleup_c_shared AND SCALEUP_INSTALL)
  # Debian's names for a C library: the runtime package after the SONAME, the -dev package
  # beside it; scaleup.h itself is a header of libscaleup-dev.
  list(APPEND CPACK_COMPONENTS_ALL c cdev)
  set(CPACK_DEBIAN_C_PACKAGE_NAME libscaleup-c0)
  set(CPACK_DEBIAN_C_PACKAGE_SECTION libs)
  # What dpkg-shlibdeps of a program linked with it reads (shlibs: a program needs this version
  # or later), and ldconfig run by trigger after install and removal, as policy 8.1.1 asks.
  set(scaleup_c_control ${CMAKE_BINARY_DIR}/packaging/libscaleup-c0)
  file(WRITE ${scaleup_c_control}/shlibs "libscaleup_c 0 libscaleup-c0 (>= ${PROJECT_VERSION})\n")
  file(WRITE ${scaleup_c_control}/triggers "activate-noawait ldconfig\n")
  set(CPACK_DEBIAN_C_PACKAGE_CONTROL_EXTRA "${scaleup_c_control}/shlibs;${scaleup_c_control}/triggers")
  set(CPACK_DEBIAN_C_DESCRIPTION
    "C ABI of the scaleup library for XPU scale-up fabrics (shared library)\nThe SUE wire formats, frames, the command packer and the transport state\nmachines of the scaleup C++20 library, for C11 programs: libscaleup_c.so.0.")
  set(CPACK_DEBIAN_CDEV_PACKAGE_NAME libscaleup-c-dev)
  set(CPACK_DEBIAN_CDEV_PACKAGE_SECTION libdevel)
  set(CPACK_DEBIAN_CDEV_PACKAGE_DEPENDS
      "libscaleup-c0 (= ${PROJECT_VERSION}), libscaleup-dev (= ${PROJECT_VERSION})")
  set(CPACK_DEBIAN_CDEV_DESCRIPTION
    "C ABI of the scaleup library for XPU scale-up fabrics (development files)\nThe static library libscaleup_c.a, the link to the shared one, the CMake\ntargets (find_package(scaleup COMPONENTS c)) and scaleup-c.pc; the header\nscaleup.h comes with libscaleup-dev.")
endif()
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
    "Wireshark plugin for XPU scale-up fabrics\nDissects Scale-Up Ethernet (SUE), SUE Lite, AFH Gen 1 and Gen 2, Tofu-style\nslices and RDMA QoS engine packets in Wireshark and tshark, with go-back-N\nsequence analysis, from the scaleup library's dissection engine.")
endif()
include(CPack)
