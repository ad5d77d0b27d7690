// The builders of the `scaleup` module (builders.cpp): frame(), pdu(), pack(), write_pcap().
#pragma once

#include <pybind11/pybind11.h>

void add_builders(pybind11::module_& m);
