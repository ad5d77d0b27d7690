// scaleup_docgen: renders the field tables as Markdown (bit diagrams and field tables) and keeps
// the generated region of docs/wire-format.md in step with them.
//
//   scaleup_docgen --print          the generated Markdown, on stdout
//   scaleup_docgen --check FILE     exit 0 if FILE's generated region is current, 1 if not
//   scaleup_docgen --update FILE    rewrite FILE's generated region in place
//   scaleup_docgen --check-rules FILE, --update-rules FILE
//                                   the same for docs/conformance.md's rule table
//   scaleup_docgen --scapy TEMPLATE  the scapy module (python/scaleup_scapy.py) made from its
//                                    template (python/scaleup_scapy.py.in), on stdout
//   scaleup_docgen --check-scapy TEMPLATE FILE   exit 0 if FILE is the module as generated
//   scaleup_docgen --update-scapy TEMPLATE FILE  write the module to FILE
//   scaleup_docgen --check-profile FILE   exit 0 if FILE is the default command profile as a
//                                         profile file (profiles/default.json), 1 if not
//   scaleup_docgen --update-profile FILE  write the default profile to FILE
//   scaleup_docgen --lua TEMPLATE   the Lua dissector (wireshark/scaleup.lua) made from its
//                                   template (wireshark/scaleup.lua.in), on stdout
//   scaleup_docgen --check-lua TEMPLATE FILE   exit 0 if FILE is the dissector as generated
//   scaleup_docgen --update-lua TEMPLATE FILE  write the dissector to FILE
//
// The region is everything between the BEGIN and END marker lines below; the scapy module and
// the Lua dissector are generated whole, from their templates (scapy_module.cpp,
// lua_dissector.cpp). Everything the tool writes comes from the tables and the templates alone,
// so the output is the same on every machine and every run.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "lua_dissector.hpp"
#include "scaleup/dissect/conformance.hpp"
#include "scaleup/dissect/profile_loader.hpp"
#include "scaleup/dissect/registry.hpp"
#include "scapy_module.hpp"

namespace {

namespace wire = scaleup::wire;
using wire::field_info;

constexpr std::string_view begin_marker = "<!-- BEGIN GENERATED: field tables -->";
constexpr std::string_view end_marker = "<!-- END GENERATED: field tables -->";
constexpr std::string_view rules_begin_marker = "<!-- BEGIN GENERATED: conformance rules -->";
constexpr std::string_view rules_end_marker = "<!-- END GENERATED: conformance rules -->";

constexpr std::size_t row_bits = 32;
constexpr std::size_t none = static_cast<std::size_t>(-1);

using header_doc = scaleup::dissect::table;
namespace pack = scaleup::pack;
using scaleup::dissect::table_group;

std::vector<header_doc> tables_in(std::initializer_list<table_group> groups) {
  std::vector<header_doc> out;
  for (const auto& t : scaleup::dissect::tables)
    for (const auto g : groups)
      if (t.group == g) out.push_back(t);
  return out;
}

std::vector<header_doc> all_headers() { return tables_in({table_group::frame, table_group::link}); }

// The control layouts of the default command profile, and what crosses the XPU boundary.
std::vector<header_doc> default_profile_shapes() {
  return tables_in({table_group::command, table_group::xpu, table_group::engine});
}

// ---- text helpers ------------------------------------------------------------------------

std::string filter_suffix(std::string_view filter) {
  const auto dot = filter.rfind('.');
  return std::string(dot == std::string_view::npos ? filter : filter.substr(dot + 1));
}

// Centred in `width` columns; an odd spare column goes to the left (as in RFC 791).
std::string centre(std::string_view label, std::size_t width) {
  if (label.size() >= width) return std::string(label.substr(0, width));
  const std::size_t spare = width - label.size();
  const std::size_t left = (spare + 1) / 2;
  return std::string(left, ' ') + std::string(label) + std::string(spare - left, ' ');
}

std::string number(std::uint64_t v, wire::kind k) {
  std::ostringstream os;
  if (k == wire::kind::hex)
    os << "0x" << std::uppercase << std::hex << v;
  else
    os << v;
  return os.str();
}

// A Markdown table cell: pipes escaped, line breaks flattened.
std::string cell(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string code(std::string_view s) {
  return s.empty() ? std::string() : "`" + std::string(s) + "`";
}

std::string bit_range(const field_info& f) {
  if (f.width == 1) return std::to_string(f.bit);
  return std::to_string(f.bit) + "-" + std::to_string(f.bit + f.width - 1);
}

std::string rule_text(const field_info& f) {
  switch (f.check) {
    case wire::rule::reserved:
      return "reserved (sent 0, reported)";
    case wire::rule::fixed:
      return "fixed = " + number(f.expect, f.type);
    case wire::rule::any:
      break;
  }
  return {};
}

std::string values_text(const field_info& f) {
  std::string out;
  for (const auto& n : f.names) {
    if (!out.empty()) out += ", ";
    out += std::to_string(n.value) + " = " + std::string(n.name);
  }
  return out;
}

// ---- the bit diagram ---------------------------------------------------------------------

// A diagram in the style of RFC 791: 32 bits a row, two columns a bit, each field drawn over its
// bits with its name centred. A field that goes on into the next row leaves the border between
// the two rows open over the bits it holds in both (as RFC 8200 draws its addresses). Names too
// long for their field give way to the filter name's last part, then to a number explained
// below the diagram.
std::string diagram(const header_doc& h) {
  const std::size_t total = h.size * 8;
  const std::size_t rows = (total + row_bits - 1) / row_bits;

  std::vector<std::size_t> owner(total, none);
  for (std::size_t i = 0; i < h.fields.size(); ++i)
    for (std::size_t b = h.fields[i].bit;
         b < std::size_t{h.fields[i].bit} + h.fields[i].width && b < total; ++b)
      owner[b] = i;

  const auto bits_in_row = [&](std::size_t r) {
    return total - r * row_bits < row_bits ? total - r * row_bits : row_bits;
  };
  const auto owner_at = [&](std::size_t r, std::size_t b) {
    return r < rows && b < bits_in_row(r) ? owner[r * row_bits + b] : none;
  };

  std::string out;
  const std::size_t ruler = bits_in_row(0);
  std::string tens(2 * ruler + 1, ' ');
  std::string ones(2 * ruler + 1, ' ');
  for (std::size_t b = 0; b < ruler; ++b) {
    if (b % 10 == 0) tens[2 * b + 1] = static_cast<char>('0' + (b / 10) % 10);
    ones[2 * b + 1] = static_cast<char>('0' + b % 10);
  }
  for (std::string* s : {&tens, &ones})
    while (!s->empty() && s->back() == ' ') s->pop_back();
  out += tens + "\n" + ones + "\n";

  // The border above row r (r == rows: below the last row).
  const auto border = [&](std::size_t r) {
    const std::size_t width = r == 0 ? bits_in_row(0) : bits_in_row(r - 1);
    std::string line(2 * width + 1, '-');
    std::vector<bool> open(width, false);
    for (std::size_t b = 0; b < width; ++b)
      open[b] = r > 0 && owner_at(r, b) != none && owner_at(r, b) == owner_at(r - 1, b);
    for (std::size_t b = 0; b < width; ++b)
      if (open[b]) line[2 * b + 1] = ' ';
    for (std::size_t b = 0; b <= width; ++b) {
      const bool inside =
          b > 0 && b < width && open[b - 1] && open[b] && owner_at(r, b - 1) == owner_at(r, b);
      line[2 * b] = inside ? ' ' : '+';
    }
    return line + "\n";
  };

  std::vector<std::string> legend;
  for (std::size_t r = 0; r < rows; ++r) {
    out += border(r);
    const std::size_t n = bits_in_row(r);
    std::string line(2 * n + 1, ' ');
    std::size_t b = 0;
    while (b < n) {
      const std::size_t f = owner_at(r, b);
      std::size_t e = b + 1;
      while (e < n && owner_at(r, e) == f) ++e;
      const std::size_t width = 2 * (e - b) - 1;
      line[2 * b] = '|';
      line[2 * e] = '|';
      std::string label;
      if (f != none) {
        const field_info& fi = h.fields[f];
        const std::string name(fi.name);
        const std::string suffix = filter_suffix(fi.filter);
        const bool first = r * row_bits + b == fi.bit;
        const std::string shorter = suffix.size() < name.size() ? suffix : name;
        if (first) {
          if (name.size() <= width) {
            label = name;
          } else if (shorter.size() <= width) {
            label = shorter;
          } else {
            const std::size_t k = legend.size() + 1;
            label = k < 10 ? std::to_string(k) : std::string(1, static_cast<char>('a' + k - 10));
            legend.push_back(label + ": " + name + " (" + std::string(fi.filter) + ")");
          }
        } else {
          for (const std::string& c :
               {name + " (cont.)", shorter + " (cont.)", std::string("(cont.)")})
            if (c.size() <= width) {
              label = c;
              break;
            }
        }
      }
      line.replace(2 * b + 1, width, centre(label, width));
      b = e;
    }
    out += line + "\n";
  }
  out += border(rows);
  if (!legend.empty()) {
    out += "\n";
    for (const auto& l : legend) out += l + "\n";
  }
  return out;
}

// ---- the Markdown ------------------------------------------------------------------------

std::string field_table(std::span<const field_info> fields) {
  std::string out =
      "| bits | field | filter name | width | rule | values | description | seed |\n"
      "|------|-------|-------------|-------|------|--------|-------------|------|\n";
  for (const auto& f : fields) {
    out += "| " + bit_range(f) + " | " + cell(f.name) + " | " + code(f.filter) + " | " +
           std::to_string(f.width) + " | " + cell(rule_text(f)) + " | " + cell(values_text(f)) +
           " | " + cell(f.description) + " | " + cell(f.seed) + " |\n";
  }
  return out;
}

std::string header_section(const header_doc& h) {
  std::string out = "### " + std::string(h.title) + " (`" + std::string(h.name) + "`, " +
                    std::to_string(h.size) + (h.size == 1 ? " byte)\n\n" : " bytes)\n\n");
  out += "Seed: " + std::string(h.seed) + "\n\n";
  out += "```text\n" + diagram(h) + "```\n\n";
  return out + field_table(h.fields) + "\n";
}

// Every shipped profile: its types, then (for the default one) the control layouts.
std::string profiles_markdown() {
  std::string out;
  for (const pack::profile* p : pack::shipped_profiles) {
    out += "### Command profile `" + std::string(p->name()) + "`\n\n" +
           std::string(p->description()) + ".\n\n";
    out +=
        "| code | name | control | data | VC (AXI) | description | seed |\n"
        "|------|------|---------|------|----------|-------------|------|\n";
    for (const auto& t : p->types())
      out += "| " + number(t.code, wire::kind::hex) + " | " + code(t.name) + " | " +
             std::to_string(t.control_units) + " units (" + std::to_string(t.control_bytes()) +
             " bytes) | " + (t.has_data ? "1-256 bytes" : "none") + " | " + std::to_string(t.vc) +
             " | " + cell(t.description) + " | " + cell(t.seed) + " |\n";
    out += "\n";
  }
  for (const auto& h : default_profile_shapes()) out += header_section(h);
  return out;
}

std::string generated_markdown() {
  std::string out = "\n";
  for (const auto& h : all_headers()) out += header_section(h);
  out += profiles_markdown();
  out += "### Computed fields\n\n";
  out +=
      "| field | filter name | values | description | seed |\n"
      "|-------|-------------|--------|-------------|------|\n";
  for (const field_info* f : scaleup::dissect::computed)
    out += "| " + cell(f->name) + " | " + code(f->filter) + " | " + cell(values_text(*f)) + " | " +
           cell(f->description) + " | " + cell(f->seed) + " |\n";
  out += "\n";
  return out;
}

// docs/conformance.md's rule table, from dissect/conformance.hpp's: the one `scaleup check`
// reports by and the Wireshark plugin's sue.check.* expert infos are named from.
std::string rules_markdown() {
  std::string out =
      "\n| id | seed | what is checked | examines | configuration | what a capture cannot show |\n"
      "|----|------|-----------------|----------|---------------|----------------------------|\n";
  for (const auto& r : scaleup::dissect::rules)
    out += "| " + code(r.id) + " | " + cell(r.seed) + " | " + cell(r.sentence) + " | " +
           cell(r.examines) + " | " + (r.config.empty() ? std::string("-") : code(r.config)) +
           " | " + cell(r.cannot) + " |\n";
  out += "\n";
  return out;
}

// A generated region of a document: its markers, what goes between them, and how to repair it.
struct generated_region {
  std::string_view begin, end;
  std::string (*text)();
  std::string_view what, fix;
};
const generated_region field_tables{begin_marker, end_marker, generated_markdown,
                                    "the generated field tables are", "--update"};
const generated_region rule_table{rules_begin_marker, rules_end_marker, rules_markdown,
                                  "the generated rule table is", "--update-rules"};

// ---- the file ----------------------------------------------------------------------------

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// A line as compared: without the carriage return of a CRLF checkout.
std::string_view bare(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

struct region {
  std::size_t begin = 0;  // index of the BEGIN marker line
  std::size_t end = 0;    // index of the END marker line
};

// Finds the one BEGIN ... END pair; on failure prints why and returns false.
bool find_region(const std::string& path, const std::vector<std::string>& lines,
                 const generated_region& doc, region& out) {
  std::size_t begins = 0;
  std::size_t ends = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (bare(lines[i]) == doc.begin) {
      out.begin = i;
      ++begins;
    } else if (bare(lines[i]) == doc.end) {
      out.end = i;
      ++ends;
    }
  }
  if (begins != 1 || ends != 1 || out.end < out.begin) {
    std::cerr << "scaleup_docgen: " << path << ": expected exactly one line\n  " << doc.begin
              << "\nfollowed by exactly one line\n  " << doc.end << "\n(found " << begins
              << " BEGIN and " << ends << " END marker lines"
              << (begins == 1 && ends == 1 ? ", in the wrong order" : "") << ")\n";
    return false;
  }
  return true;
}

bool read_file_quiet(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream os;
  os << in.rdbuf();
  text = os.str();
  return true;
}

bool read_file(const std::string& path, std::string& text) {
  if (read_file_quiet(path, text)) return true;
  std::cerr << "scaleup_docgen: cannot read " << path << "\n";
  return false;
}

// A line as shown in a message.
std::string shown(bool exists, std::string_view line) {
  if (!exists) return "(end of the generated region)";
  if (line.empty()) return "(empty line)";
  return std::string(line);
}

// The first line where `found` differs from `want`, reported with the command that repairs it;
// 0 when none does. `first_line`: the file's line number of found[0].
int compare(const std::string& path, const std::vector<std::string>& found, std::size_t first_line,
            const std::vector<std::string>& want, std::string_view what, std::string_view fix) {
  for (std::size_t i = 0; i < want.size() || i < found.size(); ++i) {
    const bool has_found = i < found.size();
    const bool has_want = i < want.size();
    if (has_found && has_want && bare(found[i]) == want[i]) continue;
    std::cerr << path << ":" << first_line + i << ": " << what
              << " out of date (first difference here)\n"
              << "  expected: " << shown(has_want, has_want ? want[i] : std::string_view()) << "\n"
              << "  found:    " << shown(has_found, has_found ? bare(found[i]) : std::string_view())
              << "\n"
              << "run: scaleup_docgen " << fix << " " << path << "\n";
    return 1;
  }
  return 0;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!(file << text) || !file.flush()) {
    std::cerr << "scaleup_docgen: cannot write " << path << "\n";
    return false;
  }
  return true;
}

int check(const std::string& path, const generated_region& doc) {
  std::string text;
  if (!read_file(path, text)) return 2;
  const auto lines = split_lines(text);
  region reg;
  if (!find_region(path, lines, doc, reg)) return 2;
  const std::vector<std::string> found(lines.begin() + static_cast<std::ptrdiff_t>(reg.begin) + 1,
                                       lines.begin() + static_cast<std::ptrdiff_t>(reg.end));
  return compare(path, found, reg.begin + 2, split_lines(doc.text()), doc.what, doc.fix);
}

int update(const std::string& path, const generated_region& doc) {
  std::string text;
  if (!read_file(path, text)) return 2;
  const auto lines = split_lines(text);
  region reg;
  if (!find_region(path, lines, doc, reg)) return 2;

  std::string out;
  for (std::size_t i = 0; i <= reg.begin; ++i) out += lines[i] + "\n";
  out += doc.text();
  for (std::size_t i = reg.end; i < lines.size(); ++i) out += lines[i] + "\n";
  if (out == text) {
    std::cout << path << ": generated region already up to date\n";
    return 0;
  }
  if (!write_file(path, out)) return 2;
  std::cout << path << ": generated region updated\n";
  return 0;
}

// The scapy module and the Lua dissector are generated whole from a template: FILE must be
// exactly what `generate` makes of TEMPLATE's text (line ends aside).
using from_template = std::string (*)(std::string_view);

struct generated_file {
  from_template generate;
  std::string_view what;    // "the scapy module"
  std::string_view option;  // "scapy": --scapy, --check-scapy, --update-scapy
};

constexpr generated_file scapy_file{scaleup::docgen::scapy_module, "the scapy module", "scapy"};
constexpr generated_file lua_file{scaleup::docgen::lua_dissector, "the Lua dissector", "lua"};

// Empty, with the reason on stderr, when TEMPLATE cannot be read or does not fit the tables.
std::string generate(const generated_file& g, const std::string& template_path) {
  std::string text;
  if (!read_file(template_path, text)) return {};
  return g.generate(text);
}

int check_generated(const generated_file& g, const std::string& template_path,
                    const std::string& path) {
  const std::string out = generate(g, template_path);
  if (out.empty()) return 2;
  std::string text;
  if (!read_file(path, text)) return 2;
  return compare(path, split_lines(text), 1, split_lines(out), std::string(g.what) + " is",
                 "--update-" + std::string(g.option) + " " + template_path);
}

int update_generated(const generated_file& g, const std::string& template_path,
                     const std::string& path) {
  const std::string out = generate(g, template_path);
  if (out.empty()) return 2;
  std::string text;
  if (read_file_quiet(path, text) && text == out) {
    std::cout << path << ": " << g.what << " already up to date\n";
    return 0;
  }
  if (!write_file(path, out)) return 2;
  std::cout << path << ": " << g.what << " written\n";
  return 0;
}

int print_generated(const generated_file& g, const std::string& template_path) {
  const std::string out = generate(g, template_path);
  if (out.empty()) return 2;
  std::cout << out;
  return std::cout.flush() ? 0 : 2;
}

// profiles/default.json: the default profile as the file `scaleup --profile FILE` reads.
std::string default_profile_json() {
  std::string text;
  auto sink = [&text](std::string_view s) { text += s; };
  scaleup::dissect::put_profile_json(sink, scaleup::pack::default_profile);
  return text;
}

int check_profile(const std::string& path) {
  std::string text;
  if (!read_file(path, text)) return 2;
  return compare(path, split_lines(text), 1, split_lines(default_profile_json()),
                 "the default profile is", "--update-profile");
}

int update_profile(const std::string& path) {
  const std::string json = default_profile_json();
  std::string text;
  if (read_file_quiet(path, text) && text == json) {
    std::cout << path << ": profile file already up to date\n";
    return 0;
  }
  if (!write_file(path, json)) return 2;
  std::cout << path << ": profile file written\n";
  return 0;
}

int usage() {
  std::cerr << "usage: scaleup_docgen --print\n"
               "       scaleup_docgen --check FILE\n"
               "       scaleup_docgen --update FILE\n"
               "       scaleup_docgen --check-rules FILE\n"
               "       scaleup_docgen --update-rules FILE\n"
               "       scaleup_docgen --scapy TEMPLATE\n"
               "       scaleup_docgen --check-scapy TEMPLATE FILE\n"
               "       scaleup_docgen --update-scapy TEMPLATE FILE\n"
               "       scaleup_docgen --check-profile FILE\n"
               "       scaleup_docgen --update-profile FILE\n"
               "       scaleup_docgen --lua TEMPLATE\n"
               "       scaleup_docgen --check-lua TEMPLATE FILE\n"
               "       scaleup_docgen --update-lua TEMPLATE FILE\n"
               "The generated region of FILE lies between the lines\n  "
            << begin_marker << "\nand\n  " << end_marker << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "--print") {
    std::cout << generated_markdown();
    return std::cout.flush() ? 0 : 2;
  }
  if (args.size() == 2 && args[0] == "--check") return check(args[1], field_tables);
  if (args.size() == 2 && args[0] == "--update") return update(args[1], field_tables);
  if (args.size() == 2 && args[0] == "--check-rules") return check(args[1], rule_table);
  if (args.size() == 2 && args[0] == "--update-rules") return update(args[1], rule_table);
  for (const auto* g : {&scapy_file, &lua_file}) {
    const std::string option(g->option);
    if (args.size() == 2 && args[0] == "--" + option) return print_generated(*g, args[1]);
    if (args.size() == 3 && args[0] == "--check-" + option)
      return check_generated(*g, args[1], args[2]);
    if (args.size() == 3 && args[0] == "--update-" + option)
      return update_generated(*g, args[1], args[2]);
  }
  if (args.size() == 2 && args[0] == "--check-profile") return check_profile(args[1]);
  if (args.size() == 2 && args[0] == "--update-profile") return update_profile(args[1]);
  return usage();
}
