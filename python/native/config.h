// The keyword arguments of seam.plan, seam.run and seam.compare as seam's
// values, checked as the command line checks its flags.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "seam/model.h"
#include "seam/topology.h"
#include "seam/wire.h"

namespace seam::python {

// The knobs' keyword arguments of seam.plan and seam.run (seam/knobs.h), by
// their Python names, None where one was not given, as a configuration
// checked as the command line checks its flags; raises seam.BadInput.
ParallelConfig ConfigOf(const pybind11::dict& knobs);
// The knob table as the package reads it: per knob its keyword, JSON key,
// kind, choices and the keyword's default (None where it follows others).
pybind11::list KnobList();

// A number of seconds in [kMinSeconds, kMaxSeconds] (seam/limits.h), as the
// command line reads --timeout and --max-seconds; raises seam.BadInput
// naming `name` for NaN, an infinity, zero or less, or more than a day.
void CheckSeconds(const char* name, double value);
// A number of milliseconds above 0 and at most a day, as the command line
// reads --ttft and --tpot, in seconds; raises seam.BadInput naming `name`
// for NaN, an infinity, zero or less, or more than a day.
double SecondsOfMillis(const char* name, double ms);

WireDtypes WireOf(const std::string& act, const std::optional<std::string>& dispatch);

// A catalogue name or a config.json path (exactly one), cut to `layers`.
Model ModelOf(const std::string& name, const std::string& hf_config, int layers);

}  // namespace seam::python
