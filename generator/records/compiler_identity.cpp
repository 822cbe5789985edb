// A record's compiler text: written, read back, and its flags normalised.
#include "records/compiler_identity.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <sstream>

namespace ansor {

namespace {

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool starts_with_any(std::string_view s, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return s.starts_with(p); });
}

// The leading "14.0.6" of "14.0.6-1ubuntu1", with its major number.
void set_version(CompilerIdentity& id, std::string_view word) {
  size_t end = word.find_first_not_of("0123456789.");
  std::string_view v = word.substr(0, end);
  int major = -1;
  auto [rest, error] = std::from_chars(v.data(), v.data() + v.size(), major);
  if (error != std::errc() || rest == v.data()) return;
  id.version = std::string(v);
  id.major = major;
}

// The word after `marker` in the version line ("clang version 14.0.6" → "14.0.6").
std::string_view word_after(std::string_view line, std::string_view marker) {
  size_t at = line.find(marker);
  if (at == std::string_view::npos) return {};
  std::string_view rest = line.substr(at + marker.size());
  return rest.substr(0, rest.find_first_of(" ,"));
}

void recognise(CompilerIdentity& id) {
  std::string_view line = id.version_line;
  if (std::string_view v = word_after(line, "clang version "); !v.empty()) {
    // Apple numbers its clang releases apart from LLVM's.
    id.family = line.starts_with("Apple ") ? "apple-clang" : "clang";
    set_version(id, v);
  } else if (line.starts_with("nvcc ")) {
    id.family = "nvcc";
    set_version(id, word_after(line, "release "));
  } else {
    // GCC: "g++ (Debian 12.2.0-14) 12.2.0", "gcc (GCC) 13.2.1 20230801".
    std::string program(line.substr(0, line.find(' ')));
    program = program.substr(program.rfind('/') + 1);
    size_t paren = line.rfind(')');
    bool gnu = program.find("g++") != std::string::npos || program.find("gcc") != std::string::npos || program.ends_with("c++");
    if (gnu && paren != std::string_view::npos) {
      for (const std::string& w : words(line.substr(paren + 1))) {
        if (w.front() >= '0' && w.front() <= '9') {
          id.family = "gcc";
          set_version(id, w);
          break;
        }
      }
    }
  }
  if (id.major < 0) id.family.clear();
}

// Options whose next word is their argument, whatever it looks like.
bool takes_next_word(std::string_view flag) {
  static constexpr std::array<std::string_view, 19> kOptions = {
      "-Xclang", "-mllvm", "-Xcompiler", "-Xlinker", "-Xptxas", "-Xassembler", "-Xpreprocessor", "-include", "-imacros", "-isystem",
      "-iquote", "-idirafter", "-I", "-L", "-D", "-U", "-x", "-ccbin", "--compiler-options"};
  return std::find(kOptions.begin(), kOptions.end(), flag) != kOptions.end();
}

// Options whose relative order matters among themselves (search paths, words handed through to
// another tool): kept as given.
bool keeps_order(std::string_view option) {
  return starts_with_any(option, {"-I", "-isystem", "-iquote", "-idirafter", "-include", "-imacros", "-L", "-l", "-F", "-Xclang", "-mllvm",
                                  "-Xcompiler", "-Xlinker", "-Xptxas", "-Xassembler", "-Xpreprocessor", "-Wl,", "-Wa,", "-Wp,",
                                  "--compiler-options"});
}

// Options that set or clear several others at once (the math flags), or clear a CPU feature and
// those built on it (-mno-avx clears AVX2 too): the options before and after them do not commute
// with them.
bool is_barrier(std::string_view option) {
  if (option.starts_with("-mno-")) return option.find('=') == std::string_view::npos;
  return option == "-ffast-math" || option == "-fno-fast-math" || option == "-funsafe-math-optimizations" ||
         option == "-fno-unsafe-math-optimizations" || option == "-Ofast";
}

// What an option sets: options of the same key override each other, the last one winning.
std::string setting_key(std::string_view option) {
  if (option.starts_with("-O")) return "-O";
  if (option.starts_with("-D") || option.starts_with("-U")) {
    std::string_view name = option.substr(2);
    name.remove_prefix(std::min(name.find_first_not_of(' '), name.size()));
    return "-D" + std::string(name.substr(0, name.find('=')));
  }
  if (size_t eq = option.find('='); eq != std::string_view::npos) return std::string(option.substr(0, eq + 1));
  for (std::string_view prefix : {"-f", "-m", "-W"}) {
    std::string negated = std::string(prefix) + "no-";
    if (option.starts_with(negated)) return std::string(prefix) + std::string(option.substr(negated.size()));
  }
  return std::string(option);
}

}  // namespace

std::string CompilerIdentity::short_name() const { return family.empty() ? version_line : family + " " + version; }

std::string compiler_identity_text(const std::string& version_line, const std::vector<std::string>& flags) {
  std::string s = version_line;
  for (const std::string& f : flags) s += " " + f;
  return s;
}

CompilerIdentity parse_compiler_identity(std::string_view text) {
  CompilerIdentity id;
  std::vector<std::string> all = words(text);
  auto first_flag = std::find_if(all.begin(), all.end(), [](const std::string& w) { return w.front() == '-'; });
  for (auto w = all.begin(); w != first_flag; ++w) id.version_line += (id.version_line.empty() ? "" : " ") + *w;
  id.flags.assign(first_flag, all.end());
  recognise(id);
  return id;
}

std::vector<std::string> normalized_flags(const std::vector<std::string>& flags) {
  // Whole options first: a separate argument joins its option.
  std::vector<std::string> options;
  bool argument_next = false;
  for (const std::string& f : flags) {
    if (f.empty()) continue;
    if (!options.empty() && (argument_next || f.front() != '-')) {
      options.back() += " " + f;
      argument_next = false;
      continue;
    }
    options.push_back(f);
    argument_next = takes_next_word(f);
  }
  std::vector<std::string> out, ordered;
  std::map<std::string, std::string> settings;  // key → last option; sorted by key
  auto flush = [&] {
    for (auto& [key, option] : settings) out.push_back(std::move(option));
    settings.clear();
  };
  for (std::string& option : options) {
    if (keeps_order(option)) {
      ordered.push_back(std::move(option));
    } else if (is_barrier(option)) {
      flush();
      if (out.empty() || out.back() != option) out.push_back(std::move(option));
    } else {
      settings[setting_key(option)] = std::move(option);
    }
  }
  flush();
  out.insert(out.end(), ordered.begin(), ordered.end());
  return out;
}

}  // namespace ansor
