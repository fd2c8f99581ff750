// The `rolly` command line: parses the verb and its arguments with CLI11 and calls the verb's
// function (verbs.h). Nothing else happens here; docs/cli.md is the reference.
//
// Exit codes: 0 every file valid, 1 a file damaged or newer, 2 a usage error or an unreadable path.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "verbs.h"

namespace {

constexpr const char* kMoreInfo = "Run with --help for more information.\n";

// Turns the --known-chunk values into chunk IDs; CLI11 has checked each is four characters.
std::vector<rolly::format::ChunkId> ToChunkIds(const std::vector<std::string>& ids) {
  std::vector<rolly::format::ChunkId> out;
  for (const std::string& id : ids) {
    out.push_back(
        *rolly::format::ChunkId::FromBytes(reinterpret_cast<const std::uint8_t*>(id.data())));
  }
  return out;
}

// Accepts four printable ASCII characters (0x21..0x7E), as a chunk ID is.
std::string CheckChunkId(const std::string& id) {
  if (id.size() == 4 &&
      rolly::format::ChunkId::FromBytes(reinterpret_cast<const std::uint8_t*>(id.data()))) {
    return {};
  }
  return "a chunk ID is four printable ASCII characters, such as MYGM";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Inspects and checks Rolly Save files.", "rolly");
  app.set_version_flag("--version", "rolly " ROLLY_CLI_VERSION);
  // No verb is checked after parsing, so that an unknown word is reported as an unknown verb.
  app.require_subcommand(0, 1);

  rolly::cli::InfoOptions info;
  std::vector<std::string> info_known;
  CLI::App* info_cmd =
      app.add_subcommand("info", "Show a file's prelude, header and chunks, and its status.");
  info_cmd->add_option("FILE", info.path, "The save file")->required();
  info_cmd->add_flag("--json", info.json, "Print one JSON object instead of text");
  info_cmd
      ->add_option("--known-chunk", info_known,
                   "A chunk ID the game knows beyond the library's (repeatable)")
      ->allow_extra_args(false)
      ->check(CheckChunkId);

  rolly::cli::VerifyOptions verify;
  std::vector<std::string> verify_known;
  CLI::App* verify_cmd = app.add_subcommand("verify", "Check files whole; one line per file.");
  verify_cmd->add_option("FILE", verify.paths, "The save files")->required();
  verify_cmd
      ->add_option("--known-chunk", verify_known,
                   "A chunk ID the game knows beyond the library's (repeatable)")
      ->allow_extra_args(false)
      ->check(CheckChunkId);

  rolly::cli::SlotsOptions slots;
  CLI::App* slots_cmd =
      app.add_subcommand("slots", "List the slots of a save folder from its slot index.");
  slots_cmd->add_option("DIR", slots.folder, "The save folder")->required();
  slots_cmd->add_option("--prefix", slots.prefix, "The file name prefix of the saves")
      ->capture_default_str();
  slots_cmd->add_flag("--json", slots.json, "Print one JSON object instead of text");
  slots_cmd->add_flag("--verify", slots.verify,
                      "Check both copies of every slot whole instead of trusting the index");
  std::vector<std::string> slots_known;
  slots_cmd
      ->add_option("--known-chunk", slots_known,
                   "A chunk ID the game knows beyond the library's (repeatable)")
      ->allow_extra_args(false)
      ->check(CheckChunkId);

  rolly::cli::DemoOptions demo;
  CLI::App* demo_cmd = app.add_subcommand(
      "demo", "Play the sample game, save it, load it into a fresh game and compare.");
  demo_cmd->add_option("--dir", demo.dir, "The save folder")->capture_default_str();
  demo_cmd->add_option("--actors", demo.actors, "Placed actors on the sample map")
      ->capture_default_str();
  demo_cmd->add_option("--saves", demo.saves, "Saves made while playing")->capture_default_str();
  demo_cmd->add_option("--seed", demo.seed, "Seed of the map and the play")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    if (app.get_subcommands().empty() && argv[1][0] != '-') {
      std::fprintf(stderr, "rolly: unknown verb '%s' (the verbs are demo, info, slots and verify)\n%s",
                   argv[1], kMoreInfo);
      return rolly::cli::kExitUsage;
    }
    return app.exit(e) == 0 ? rolly::cli::kExitValid : rolly::cli::kExitUsage;
  } catch (const CLI::ParseError& e) {
    // Help and --version exit 0; every other parse error is a usage error.
    return app.exit(e) == 0 ? rolly::cli::kExitValid : rolly::cli::kExitUsage;
  }
  if (app.get_subcommands().empty()) {
    std::fprintf(stderr, "rolly: a verb is required (demo, info, slots or verify)\n%s", kMoreInfo);
    return rolly::cli::kExitUsage;
  }

  if (info_cmd->parsed()) {
    info.known_chunks = ToChunkIds(info_known);
    return rolly::cli::RunInfo(info, stdout, stderr);
  }
  if (slots_cmd->parsed()) {
    slots.known_chunks = ToChunkIds(slots_known);
    return rolly::cli::RunSlots(slots, stdout, stderr);
  }
  if (demo_cmd->parsed()) return rolly::cli::RunDemo(demo, stdout, stderr);
  verify.known_chunks = ToChunkIds(verify_known);
  return rolly::cli::RunVerify(verify, stdout, stderr);
}
