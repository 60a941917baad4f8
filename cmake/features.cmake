# Optional parts of the build. Each is a cache setting ON, OFF or AUTO:
# AUTO builds the part when what it needs is found (re-checked at every
# configure), ON stops the configure when it is not, OFF never looks.
#
#   seam_feature_setting(MPI "the MPI backend (libopenmpi-dev)")  # sets SEAM_LOOK_MPI unless OFF
#   if(SEAM_LOOK_MPI)
#     find_package(MPI COMPONENTS CXX QUIET)
#   endif()
#   seam_feature(MPI "${MPI_CXX_FOUND}" "no MPI: libopenmpi-dev")  # sets SEAM_WITH_MPI

function(seam_feature_setting name doc)
  set(SEAM_${name} AUTO CACHE STRING "Build ${doc}: ON, OFF or AUTO")
  set_property(CACHE SEAM_${name} PROPERTY STRINGS ON OFF AUTO)
  string(TOUPPER "${SEAM_${name}}" setting)
  if(setting MATCHES "^(OFF|NO|FALSE|0)$")
    set(SEAM_LOOK_${name} OFF PARENT_SCOPE)
  else()
    set(SEAM_LOOK_${name} ON PARENT_SCOPE)
  endif()
endfunction()

# Sets SEAM_WITH_<name> from the setting and whether its needs were found,
# and appends "name on|off" to the configure summary.
function(seam_feature name found hint)
  string(TOUPPER "${SEAM_${name}}" setting)
  if(setting STREQUAL "AUTO")
    set(enabled ${found})
  elseif(setting MATCHES "^(ON|YES|TRUE|1)$")
    if(NOT found)
      message(FATAL_ERROR "SEAM_${name} is ON but ${hint}; or configure with -DSEAM_${name}=OFF")
    endif()
    set(enabled ON)
  elseif(setting MATCHES "^(OFF|NO|FALSE|0)$")
    set(enabled OFF)
  else()
    message(FATAL_ERROR "SEAM_${name} is '${SEAM_${name}}': give ON, OFF or AUTO")
  endif()
  if(enabled)
    set(enabled ON)
    set(word on)
  elseif(setting STREQUAL "AUTO")
    set(enabled OFF)
    set(word "off (${hint})")
  else()
    set(enabled OFF)
    set(word off)
  endif()
  set(SEAM_WITH_${name} ${enabled} PARENT_SCOPE)
  string(TOLOWER ${name} lower)
  set_property(GLOBAL APPEND PROPERTY seam_summary "${lower} ${word}")
endfunction()

# One line saying what this build holds.
function(seam_print_summary)
  get_property(parts GLOBAL PROPERTY seam_summary)
  list(JOIN parts ", " text)
  message(STATUS "seam ${PROJECT_VERSION}: planner on, runtime on, ${text}")
endfunction()
