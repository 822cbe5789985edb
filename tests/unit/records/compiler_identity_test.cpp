// A record's compiler text read back (family, version, flags) and its flags normalised: equal
// where the compiler applies the same options, different where the code may differ.
#include "records/compiler_identity.h"

#include <gtest/gtest.h>

namespace ansor {
namespace {

using Flags = std::vector<std::string>;

TEST(CompilerIdentityTest, ReadsTheTextRecordsStore) {
  const std::string text = "Debian clang version 14.0.6 -O3 -march=native -fno-math-errno -ffp-contract=fast";
  CompilerIdentity id = parse_compiler_identity(text);
  EXPECT_EQ(id.version_line, "Debian clang version 14.0.6");
  EXPECT_EQ(id.flags, (Flags{"-O3", "-march=native", "-fno-math-errno", "-ffp-contract=fast"}));
  EXPECT_EQ(id.family, "clang");
  EXPECT_EQ(id.version, "14.0.6");
  EXPECT_EQ(id.major, 14);
  EXPECT_EQ(id.short_name(), "clang 14.0.6");
  EXPECT_EQ(compiler_identity_text(id.version_line, id.flags), text);
}

TEST(CompilerIdentityTest, RecognisesTheFamiliesAndTheirVersions) {
  struct Case {
    const char* text;
    const char* family;
    int major;
  };
  for (const Case& c : {Case{"Ubuntu clang version 14.0.0-1ubuntu1.1 -O3", "clang", 14},
                        Case{"clang version 17.0.6 (https://github.com/llvm/llvm-project 6009708b) -O3", "clang", 17},
                        Case{"Apple clang version 15.0.0 (clang-1500.1.0.2.5) -O3", "apple-clang", 15},
                        Case{"g++ (Debian 12.2.0-14+deb12u1) 12.2.0 -O3", "gcc", 12},
                        Case{"gcc (GCC) 13.2.1 20230801 -O2", "gcc", 13},
                        Case{"nvcc Cuda compilation tools, release 13.0, V13.0.88 -O3 -arch=sm_90", "nvcc", 13}}) {
    CompilerIdentity id = parse_compiler_identity(c.text);
    EXPECT_EQ(id.family, c.family) << c.text;
    EXPECT_EQ(id.major, c.major) << c.text;
  }
  CompilerIdentity unknown = parse_compiler_identity("clang++ (test) -O3");
  EXPECT_EQ(unknown.family, "") << "no version: matched by its version line alone";
  EXPECT_EQ(unknown.version_line, "clang++ (test)");
  EXPECT_EQ(unknown.short_name(), "clang++ (test)");
}

TEST(CompilerIdentityTest, NormalisedFlagsIgnoreOrderAndRepetition) {
  const Flags flags = {"-O3", "-march=native", "-fno-math-errno", "-ffp-contract=fast"};
  EXPECT_EQ(normalized_flags(flags), normalized_flags({"-ffp-contract=fast", "-march=native", "-O3", "-fno-math-errno"}));
  EXPECT_EQ(normalized_flags(flags), normalized_flags({"-O3", "-O3", "-march=native", "-fno-math-errno", "-ffp-contract=fast", "-march=native"}));
  // The last of an option's values is the one applied.
  EXPECT_EQ(normalized_flags({"-O2", "-O3"}), normalized_flags({"-O3"}));
  EXPECT_EQ(normalized_flags({"-fno-math-errno", "-fmath-errno"}), normalized_flags({"-fmath-errno"}));
  EXPECT_EQ(normalized_flags({"-DN=1", "-DN=2"}), normalized_flags({"-DN=2"}));
  EXPECT_EQ(normalized_flags({"-DN=1", "-UN"}), normalized_flags({"-UN"}));
}

TEST(CompilerIdentityTest, NormalisedFlagsKeepWhatChangesTheCode) {
  EXPECT_NE(normalized_flags({"-O2"}), normalized_flags({"-O3"}));
  EXPECT_NE(normalized_flags({"-O3", "-O2"}), normalized_flags({"-O2", "-O3"}));
  EXPECT_NE(normalized_flags({"-O3", "-march=native"}), normalized_flags({"-O3", "-march=x86-64-v3"}));
  EXPECT_NE(normalized_flags({"-O3"}), normalized_flags({"-O3", "-ffast-math"}));
  // An umbrella flag and one of the options it sets do not commute.
  EXPECT_NE(normalized_flags({"-ffast-math", "-fno-finite-math-only"}), normalized_flags({"-fno-finite-math-only", "-ffast-math"}));
  EXPECT_NE(normalized_flags({"-mavx2", "-mno-avx"}), normalized_flags({"-mno-avx", "-mavx2"}));
  // Search paths keep their order; a separate argument stays with its option.
  EXPECT_NE(normalized_flags({"-I", "a", "-I", "b"}), normalized_flags({"-I", "b", "-I", "a"}));
  EXPECT_EQ(normalized_flags({"-Xclang", "-fno-unroll", "-O3"}), (Flags{"-O3", "-Xclang -fno-unroll"}));
  EXPECT_NE(normalized_flags({"-Xclang", "-a", "-Xclang", "-b"}), normalized_flags({"-Xclang", "-b", "-Xclang", "-a"}));
  EXPECT_EQ(normalized_flags({"-arch", "sm_90", "-O3"}), (Flags{"-O3", "-arch sm_90"}));
}

}  // namespace
}  // namespace ansor
