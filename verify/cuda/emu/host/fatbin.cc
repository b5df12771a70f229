#include "fatbin.h"

#include <fatbinary_section.h>

#include <cctype>
#include <cstdio>
#include <cstring>

namespace kgen::emu {
namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint16_t kFatbinVersion = 1;
constexpr uint16_t kEntryKindPtx = 1;
constexpr uint16_t kEntryKindCubin = 2;
constexpr uint64_t kEntryFlagCompressed = 0x8000;
// The entry header fields read here lie in its first 48 bytes; nvcc 13 writes 64 or more.
constexpr uint32_t kSmallestEntryHeader = 48;
// A sanity bound against reading a random pointer as a fat binary for ever.
constexpr uint64_t kLargestFatbin = uint64_t{1} << 34;

template <class T>
T read_at(const unsigned char* bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes + offset, sizeof value);
  return value;
}

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

std::string ptx_target(const std::string& ptx) {
  size_t at = 0;
  while ((at = ptx.find(".target", at)) != std::string::npos) {
    bool line_start = at == 0 || ptx[at - 1] == '\n' || ptx[at - 1] == ' ' || ptx[at - 1] == '\t';
    at += 7;
    if (!line_start || at >= ptx.size() || (ptx[at] != ' ' && ptx[at] != '\t')) continue;
    while (at < ptx.size() && (ptx[at] == ' ' || ptx[at] == '\t')) ++at;
    size_t end = at;
    while (end < ptx.size() && (std::isalnum(static_cast<unsigned char>(ptx[end])) || ptx[end] == '_')) ++end;
    return ptx.substr(at, end - at);
  }
  return "";
}

FatbinContents read_fatbin(const void* data) {
  if (data == nullptr) throw FatbinError("the fat binary pointer is null");
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint32_t magic = read_at<uint32_t>(bytes, 0);
  uint16_t version = read_at<uint16_t>(bytes, 4);
  uint16_t header_size = read_at<uint16_t>(bytes, 6);
  uint64_t body_size = read_at<uint64_t>(bytes, 8);
  if (magic != kFatbinMagic)
    throw FatbinError("not a fat binary: magic " + hex(magic) + ", expected " + hex(kFatbinMagic));
  if (version != kFatbinVersion || header_size < 16)
    throw FatbinError("fat binary version " + std::to_string(version) + " with a " + std::to_string(header_size) +
                      "-byte header is not handled (nvcc 13 writes version 1, 16 bytes)");
  if (body_size > kLargestFatbin) throw FatbinError("fat binary claims an implausible size " + hex(body_size));

  FatbinContents contents;
  const unsigned char* body = bytes + header_size;
  uint64_t offset = 0;
  while (offset < body_size) {
    if (body_size - offset < kSmallestEntryHeader)
      throw FatbinError("fat binary entry at offset " + hex(offset) + " is truncated");
    const unsigned char* entry = body + offset;
    uint16_t kind = read_at<uint16_t>(entry, 0);
    uint32_t entry_header_size = read_at<uint32_t>(entry, 4);
    uint64_t payload_size = read_at<uint64_t>(entry, 8);
    uint32_t arch = read_at<uint32_t>(entry, 28);
    uint64_t flags = read_at<uint64_t>(entry, 40);
    if (entry_header_size < kSmallestEntryHeader || entry_header_size > body_size - offset ||
        payload_size > body_size - offset - entry_header_size)
      throw FatbinError("fat binary entry at offset " + hex(offset) + " has inconsistent sizes (header " +
                        std::to_string(entry_header_size) + ", payload " + std::to_string(payload_size) + ")");
    const unsigned char* payload = entry + entry_header_size;
    if (kind == kEntryKindPtx) {
      if (flags & kEntryFlagCompressed) {
        contents.compressed_ptx_arches.push_back(arch);
      } else {
        // The payload is the PTX text padded with NUL bytes.
        const void* nul = std::memchr(payload, 0, payload_size);
        size_t length = nul ? static_cast<size_t>(static_cast<const unsigned char*>(nul) - payload) : payload_size;
        PtxImage image;
        image.arch = arch;
        image.text.assign(reinterpret_cast<const char*>(payload), length);
        image.target = ptx_target(image.text);
        contents.ptx.push_back(std::move(image));
      }
    } else if (kind == kEntryKindCubin) {
      contents.cubin_arches.push_back(arch);
    }
    // Other kinds (nvcc writes none for -cudart none builds) carry nothing we can run.
    offset += entry_header_size + payload_size;
  }
  return contents;
}

FatbinContents read_fatbin_wrapper(const void* wrapper) {
  if (wrapper == nullptr) throw FatbinError("__cudaRegisterFatBinary received a null pointer");
  const auto* header = static_cast<const __fatBinC_Wrapper_t*>(wrapper);
  if (static_cast<uint32_t>(header->magic) != FATBINC_MAGIC)
    throw FatbinError("__cudaRegisterFatBinary received something that is not a __fatBinC_Wrapper_t (magic " +
                      hex(static_cast<uint32_t>(header->magic)) + ")");
  if (header->version != FATBINC_VERSION)
    throw FatbinError("fat binary wrapper version " + std::to_string(header->version) +
                      " (relocatable device code, -rdc=true) is not supported by ptxemu; build without -rdc");
  return read_fatbin(header->data);
}

}  // namespace kgen::emu
