// Floating-point numbers in the studio's JSON, where NaN and the infinities have no numbers: they travel
// as the strings "nan", "inf" and "-inf" (read also as "+inf", "infinity", any case), for tensor elements
// and float attributes alike.
#pragma once

#include <string>

#include "ir/commands/ir_json.h"

namespace tessera::ir {

// A number, or one of the strings above; JsonError naming `what` otherwise.
double json_float_value(const json& v, const std::string& what);
// A finite value as a number, a non-finite one as its string.
json json_float(double x);

}  // namespace tessera::ir
