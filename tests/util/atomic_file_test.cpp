// StagedFile / write_file_atomically: several writers of one file at once each
// publish a whole file of their own, and no temporary is left (issue 54, item 11).

#include "util/atomic_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "util/errors.hpp"
#include "util_test_support.hpp"

namespace splitscope {
namespace atomic_file_test {
namespace {

namespace fs = std::filesystem;

/// Writer w's content: its own letter, of its own length, so that any mix of
/// two writers (one's head and another's tail) is none of them.
std::string content_of(int writer) {
  return std::string(static_cast<size_t>(200000 + 997 * writer), static_cast<char>('a' + writer));
}

TEST(AtomicFile, WritersOfOneFileAtOnceEachPublishAWholeFile) {
  const std::string dir = testing::fresh_util_dir("atomic-writers");
  const std::string path = dir + "/report.json";
  constexpr int kWriters = 8;
  constexpr int kRounds = 20;
  std::vector<std::string> contents;
  for (int w = 0; w < kWriters; ++w) contents.push_back(content_of(w));
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::string> failures(kWriters);
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        try {
          write_file_atomically(path, contents[static_cast<size_t>(w)]);
        } catch (const std::exception& error) {
          failures[static_cast<size_t>(w)] = error.what();
        }
      });
    }
    for (std::thread& writer : writers) writer.join();
    for (int w = 0; w < kWriters; ++w) EXPECT_EQ(failures[static_cast<size_t>(w)], "") << "writer " << w;
    const std::string published = testing::file_text(path);
    bool whole = false;
    for (const std::string& content : contents) whole = whole || published == content;
    ASSERT_TRUE(whole) << "round " << round << ": " << published.size() << " bytes, of no single writer";
    EXPECT_EQ(testing::folder_entries(dir), std::vector<std::string>{"report.json"}) << "a temporary was left";
  }
}

TEST(AtomicFile, AStagedFileNeverPublishedLeavesNothing) {
  const std::string dir = testing::fresh_util_dir("atomic-unpublished");
  {
    const StagedFile first(dir + "/r.json", "one");
    const StagedFile second(dir + "/r.json", "two");  // the same target, its own temporary
    EXPECT_EQ(testing::folder_entries(dir).size(), 2u);
  }
  EXPECT_TRUE(testing::folder_entries(dir).empty());
}

TEST(AtomicFile, AStreamedFileIsWhatItsWriterPutInOrderAndAFailingWriterLeavesNothing) {
  // Issue 54 item 17: a trace is streamed piece by piece, not held whole; pieces
  // smaller and larger than the 1 MiB buffer alike land in order.
  const std::string dir = testing::fresh_util_dir("atomic-streamed");
  const std::string big(3u << 20, 'b');
  std::string expected;
  const ContentWriter write = [&](const std::function<void(std::string_view)>& put) {
    for (int piece = 0; piece < 100000; ++piece) put(std::to_string(piece) + ",");
    put(big);
    put("end\n");
  };
  for (int piece = 0; piece < 100000; ++piece) expected += std::to_string(piece) + ",";
  expected += big + "end\n";
  StagedFile(dir + "/t.json", write).publish();
  EXPECT_EQ(testing::file_text(dir + "/t.json"), expected);
  EXPECT_EQ(testing::folder_entries(dir), std::vector<std::string>{"t.json"});

  const ContentWriter failing = [](const std::function<void(std::string_view)>& put) {
    put("half a trace");
    throw RunError("the writer failed midway");
  };
  EXPECT_THROW(StagedFile(dir + "/u.json", failing), RunError);
  EXPECT_EQ(testing::folder_entries(dir), std::vector<std::string>{"t.json"}) << "a temporary was left";
}

TEST(AtomicFile, ANewFileGetsTheUsualPermissionsAndAnOldOneKeepsItsOwn) {
  const std::string dir = testing::fresh_util_dir("atomic-mode");
  const mode_t mask = ::umask(022);  // the test's own, set and put back
  write_file_atomically(dir + "/new.json", "{}");
  ::umask(mask);
  struct stat status {};
  ASSERT_EQ(::stat((dir + "/new.json").c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0644u);  // not mkstemp's 0600
  ASSERT_EQ(::chmod((dir + "/new.json").c_str(), 0640), 0);
  write_file_atomically(dir + "/new.json", "{ }");
  ASSERT_EQ(::stat((dir + "/new.json").c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0640u);
  EXPECT_EQ(testing::file_text(dir + "/new.json"), "{ }");
}

}  // namespace
}  // namespace atomic_file_test
}  // namespace splitscope
