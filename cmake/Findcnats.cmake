# nats.c (Debian's libnats-dev) as the imported target cnats::nats.
# Debian 12's cnats-config.cmake also declares cnats::nats_static, whose libnats_static.a the
# package does not ship, and stops any find_package(cnats CONFIG) with a fatal error; so this module
# finds the header and the shared library the package does ship.
find_path(cnats_INCLUDE_DIR nats/nats.h)
find_library(cnats_LIBRARY NAMES nats)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(cnats REQUIRED_VARS cnats_LIBRARY cnats_INCLUDE_DIR)
if(cnats_FOUND AND NOT TARGET cnats::nats)
  add_library(cnats::nats SHARED IMPORTED)
  set_target_properties(cnats::nats PROPERTIES IMPORTED_LOCATION "${cnats_LIBRARY}"
                                               INTERFACE_INCLUDE_DIRECTORIES "${cnats_INCLUDE_DIR}")
endif()
