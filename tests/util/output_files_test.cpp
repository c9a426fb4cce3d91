// check_output_files: the one check of every command's output paths (issue 54, items 9 and 14).

#include "util/output_files.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "util/errors.hpp"
#include "util_test_support.hpp"

namespace splitscope {
namespace output_files_test {
namespace {

namespace fs = std::filesystem;

/// Runs the test body in `folder`, so that relative paths are the ones a user types.
class InFolder {
 public:
  explicit InFolder(const std::string& folder) : saved_(fs::current_path()) { fs::current_path(folder); }
  ~InFolder() { fs::current_path(saved_); }
  InFolder(const InFolder&) = delete;
  InFolder& operator=(const InFolder&) = delete;

 private:
  fs::path saved_;
};

/// The message of the InputError the check throws ("" if none), "option: what".
std::string refusal(const std::vector<OutputFile>& outputs, const KeptFiles& kept = {}) {
  try {
    check_output_files(outputs, kept);
  } catch (const InputError& error) {
    return error.source() + ": " + error.problem();
  }
  return "";
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(OutputFiles, AMissingFolderOrAFolderIsRefused) {
  EXPECT_NE(refusal({{"--html", "/no/such/folder/page.html"}})
                .find("--html: cannot write /no/such/folder/page.html: the folder /no/such/folder does not exist; "
                      "create it first"),
            std::string::npos);
  const std::string dir = testing::fresh_util_dir("output-folder");
  EXPECT_NE(refusal({{"--report", dir}}).find("--report: " + dir + " is a folder; give a file name"),
            std::string::npos);
}

TEST(OutputFiles, TwoSpellingsOfOneNewFileAreOneFile) {
  const std::string dir = testing::fresh_util_dir("output-aliases");
  fs::create_directories(dir + "/adir");
  const InFolder here(dir);
  // r.json does not exist yet: resolving it must not leave it relative.
  EXPECT_NE(refusal({{"--report", "r.json"}, {"--trace", "./r.json"}})
                .find("--trace: ./r.json (r.json) is also the file of --report; give each output its own file"),
            std::string::npos);
  EXPECT_NE(refusal({{"--report", "r.json"}, {"--html", "adir/../r.json"}})
                .find("--html: adir/../r.json (r.json) is also the file of --report"),
            std::string::npos);
  EXPECT_NE(refusal({{"--report", "r.json"}, {"--html", dir + "/r.json"}}).find("is also the file of --report"),
            std::string::npos);
  EXPECT_EQ(refusal({{"--report", "r.json"}, {"--trace", "adir/r.json"}}), "");
  EXPECT_EQ(refusal({{"--report", "/dev/null"}, {"--trace", "/dev/null"}}), "");  // nothing is kept there
}

TEST(OutputFiles, AnInputByAnotherSpellingIsRefusedNamingBoth) {
  const std::string dir = testing::fresh_util_dir("output-inputs");
  fs::create_directories(dir + "/adir");
  const InFolder here(dir);
  write("net.json", "{}");
  EXPECT_EQ(refusal({{"--report", "adir/../net.json"}}, {{"net.json"}, {}, ""}),
            "--report: adir/../net.json is net.json, which is an input of this command; writing there would "
            "destroy it: give another file name");
  EXPECT_EQ(refusal({{"--report", "net.json"}}, {{"net.json"}, {}, ""}),
            "--report: net.json is an input of this command; writing there would destroy it: give another file name");
  EXPECT_EQ(refusal({{"--report", "other.json"}}, {{"net.json", "mlp-small", ""}, {}, ""}), "");
}

TEST(OutputFiles, AFileOfAKeptFolderIsReplacedOnlyWhereForceIsOffered) {
  const std::string dir = testing::fresh_util_dir("output-kept");
  fs::create_directories(dir + "/models/networks");
  const InFolder here(dir);
  write("models/networks/mlp.json", "{}");
  const std::string shipped = fs::canonical("models/networks/mlp.json").string();
  EXPECT_EQ(refusal({{"--report", "./models/networks/mlp.json"}}, {{}, {"models"}, ""}),
            "--report: ./models/networks/mlp.json names " + shipped +
                ", a file of the zoo in models; writing there would replace it: give a file name outside models");
  EXPECT_EQ(refusal({{"--out", "models/networks/mlp.json"}}, {{}, {dir + "/models"}, "--force"}),
            "--out: models/networks/mlp.json names " + shipped + ", a file of the zoo in " + dir +
                "/models; writing there would replace it: give a file name outside " + dir +
                "/models, or add --force to replace it");
  EXPECT_EQ(refusal({{"--report", shipped}}, {{}, {"models"}, ""}),
            "--report: " + shipped + " is a file of the zoo in models; writing there would replace it: give a file "
            "name outside models");
  EXPECT_EQ(refusal({{"--out", "models/networks/new.json"}}, {{}, {"models"}, "--force"}), "");  // a new file
  EXPECT_EQ(refusal({{"--report", "mlp.json"}}, {{}, {"models"}, ""}), "");  // outside
}

}  // namespace
}  // namespace output_files_test
}  // namespace splitscope
