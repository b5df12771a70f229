#include "decode_mutant_checks.h"

#include <cstdio>
#include <optional>

namespace kgen {
namespace {

class DecodeModuleCheck final : public MutantCheck {
 public:
  DecodeModuleCheck(const TpuDecodeVerification& verification, bool mutates_combine, std::string other_text,
                    std::string other_name)
      : verification_(verification),
        mutates_combine_(mutates_combine),
        other_text_(std::move(other_text)),
        other_name_(std::move(other_name)) {}

  std::function<MutantVerdict()> compile(const std::string& text, const std::string& name) const override {
    auto variant = std::make_shared<mosaic::MosaicKernel>(verification_.compile(text, name));
    std::shared_ptr<mosaic::MosaicKernel> other;
    if (!other_text_.empty()) other = std::make_shared<mosaic::MosaicKernel>(verification_.compile(other_text_, other_name_));
    return [this, variant, other] {
      const mosaic::MosaicKernel& kernel = mutates_combine_ ? *other : *variant;
      const mosaic::MosaicKernel* combine = mutates_combine_ ? variant.get() : other.get();
      const TpuDecodeVerifyResult result = verification_.run(kernel, combine);
      return MutantVerdict{result.passed(), decode_errors_text(result)};
    };
  }

 private:
  const TpuDecodeVerification& verification_;
  bool mutates_combine_;
  std::string other_text_;
  std::string other_name_;
};

}  // namespace

std::string decode_errors_text(const TpuDecodeVerifyResult& result) {
  char text[160];
  std::snprintf(text, sizeof text, "out error %.2e, lse error %.2e, kv copies %lld of %lld", result.comparison.out_error,
                result.comparison.lse_error, static_cast<long long>(result.kv_copies),
                static_cast<long long>(result.kv_copies_allowed));
  std::string out = text;
  if (!result.schedule_mismatch.empty()) out += "; DMA schedule: " + result.schedule_mismatch;
  if (result.combine) {
    std::snprintf(text, sizeof text, "; combine alone: out error %.2e, lse error %.2e", result.combine->out_error,
                  result.combine->lse_error);
    out += text;
  }
  return out;
}

std::unique_ptr<MutantCheck> decode_kernel_check(const TpuDecodeVerification& verification, std::string combine_text,
                                                 std::string combine_name) {
  return std::make_unique<DecodeModuleCheck>(verification, false, std::move(combine_text), std::move(combine_name));
}

std::unique_ptr<MutantCheck> decode_combine_check(const TpuDecodeVerification& verification, std::string kernel_text,
                                                  std::string kernel_name) {
  return std::make_unique<DecodeModuleCheck>(verification, true, std::move(kernel_text), std::move(kernel_name));
}

}  // namespace kgen
