#include "common/declared.hpp"

namespace hp::app {
namespace {

using pipeline::ParamSpec;
using pipeline::ParamType;

const char* value_name(const ParamSpec& p) {
    if (!p.input.empty()) return "FILE";
    switch (p.type) {
    case ParamType::integer: return "INT";
    case ParamType::number: return "NUM";
    default: return "TEXT";
    }
}

// The declaration's check of one command-line value (type, range, choices).
CLI::Validator validator(const ParamSpec& p) {
    return CLI::Validator(
        [&p](std::string& text) -> std::string {
            const auto value = pipeline::parse_value(p, text);
            if (!value) return std::string("must be ") + pipeline::type_name(p.type) + " (got '" + text + "')";
            return pipeline::check_value(p, *value);
        },
        pipeline::range_text(p));
}

}  // namespace

DeclaredOptions::DeclaredOptions(CLI::App& cli, const std::vector<ParamSpec>& params) : params_(params) {
    for (const ParamSpec& p : params_) {
        CLI::Option* opt = nullptr;
        if (p.type == ParamType::flag && p.input.empty()) {
            opt = cli.add_flag(p.option, flags_[p.key], p.help);
        } else {
            opt = cli.add_option(p.option, text_[p.key], p.help)->type_name(value_name(p));
            // --help shows a default only where it means something: not for an input file (a
            // flag in the declaration, false = none).
            if (!p.default_value.is_null() && p.input.empty()) opt->default_str(pipeline::value_text(p.default_value));
            if (p.input.empty()) opt->check(validator(p));
        }
        options_[p.key] = opt;
    }
    for (const ParamSpec& p : params_)
        for (const std::string& x : p.excludes) options_.at(p.key)->excludes(options_.at(x));
}

bool DeclaredOptions::given(const std::string& key) const { return options_.at(key)->count() > 0; }

nlohmann::json DeclaredOptions::values() const {
    nlohmann::json values = nlohmann::json::object();
    for (const ParamSpec& p : params_) {
        values[p.key] = p.default_value;
        if (!given(p.key)) continue;
        if (!p.input.empty())
            values[p.key] = true;
        else if (p.type == ParamType::flag)
            values[p.key] = flags_.at(p.key);
        else
            values[p.key] = *pipeline::parse_value(p, text_.at(p.key));  // the validator parsed it
    }
    return values;
}

nlohmann::json DeclaredOptions::given_values() const {
    const nlohmann::json all = values();
    nlohmann::json given = nlohmann::json::object();
    for (const ParamSpec& p : params_)
        if (this->given(p.key)) given[p.key] = all[p.key];
    return given;
}

}  // namespace hp::app
