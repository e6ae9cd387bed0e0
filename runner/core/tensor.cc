#include "core/tensor.h"

#include <cstring>
#include <new>

#include "core/tensor_limit.h"
#include "core/tensor_memory.h"

namespace graphrun {

std::string shape_string(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(shape[i]);
  }
  out += ']';
  return out;
}

namespace {

// What an element costs against the limit: a string counts as the Python
// runtime's object pointer does (8 bytes), so both refuse the same shapes;
// its bytes are counted apart (check_string_bytes).
uint64_t limit_item_size(DataType dtype) { return dtype == graphdef::DT_STRING ? 8 : dtype_size(dtype); }

}  // namespace

void check_string_bytes(uint64_t total, const char* what) {
  const uint64_t limit = max_tensor_bytes();
  if (total > limit) {
    throw TensorLimitError(std::string(what) + " strings would take " + format_bytes(total) + ", over the limit of " +
                           format_bytes(limit) + " (set GRAPHDEF_MAX_TENSOR_BYTES to change it)");
  }
}

int64_t checked_num_elements(const Shape& shape, DataType dtype, const char* what) {
  bool has_zero_dim = false;
  for (int64_t dim : shape) {
    if (dim < 0) throw Error("shape " + shape_string(shape) + " has a negative dimension");
    if (dim == 0) has_zero_dim = true;
  }
  const uint64_t limit = max_tensor_bytes();
  // Any zero dim makes the tensor empty, yet its other dims still cost:
  // kernels compute strides and offsets from them (which would overflow on
  // [0, 2**62, 2**62]) and printing [1000000000000, 0] writes 10**12 "[]".
  // So they must fit the limit as if the zero dims were ones.
  if (has_zero_dim) {
    uint64_t other_bytes = limit_item_size(dtype);
    bool overflow = false;
    for (int64_t dim : shape) {
      overflow =
          overflow || (dim != 0 && __builtin_mul_overflow(other_bytes, static_cast<uint64_t>(dim), &other_bytes));
    }
    if (overflow || other_bytes > limit) {
      throw TensorLimitError(what + (" " + shape_string(shape)) + " " + dtype_name(dtype) +
                             " is empty, but its other dims would take " +
                             (overflow ? "more than 16.0 EiB" : format_bytes(other_bytes)) + ", over the limit of " +
                             format_bytes(limit) + " (set GRAPHDEF_MAX_TENSOR_BYTES to change it)");
    }
    return 0;
  }

  const uint64_t item_size = limit_item_size(dtype);
  uint64_t count = 1;
  uint64_t bytes = item_size;
  bool overflow = false;
  for (int64_t dim : shape) {
    overflow = overflow || __builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count) ||
               __builtin_mul_overflow(count, item_size, &bytes);
  }
  if (overflow || bytes > limit || count > static_cast<uint64_t>(INT64_MAX)) {
    throw TensorLimitError(what + (" " + shape_string(shape)) + " " + dtype_name(dtype) + " would take " +
                           (overflow ? "more than 16.0 EiB" : format_bytes(bytes)) + ", over the limit of " +
                           format_bytes(limit) + " (set GRAPHDEF_MAX_TENSOR_BYTES to change it)");
  }
  if (bytes >= kFreeCheckBytes) {
    check_free_memory(bytes, cached_tensor_bytes(), what + (" " + shape_string(shape)) + " " + dtype_name(dtype));
  }
  return static_cast<int64_t>(count);
}

Tensor::Tensor(DataType dtype, Shape shape) : Tensor(dtype, std::move(shape), true) {}

Tensor Tensor::uninitialized(DataType dtype, Shape shape) { return Tensor(dtype, std::move(shape), false); }

Tensor::Tensor(DataType dtype, Shape shape, bool zeroed)
    : dtype_(dtype), shape_(std::move(shape)), num_elements_(checked_num_elements(shape_, dtype)) {
  if (dtype_ == graphdef::DT_STRING) {  // empty strings, whether zeroed or not
    strings_ = std::make_unique<Strings>(static_cast<std::size_t>(num_elements_));
    return;
  }
  // checked_num_elements bounded the product, so it cannot overflow.
  const std::size_t count = num_elements_ > 0 ? static_cast<std::size_t>(num_elements_) : 1;
  const std::size_t bytes = count * dtype_size(dtype_);
  void* memory = allocate_tensor_memory(bytes, zeroed);
  if (memory == nullptr) throw std::bad_alloc();
  buffer_ = std::unique_ptr<void, BufferDeleter>(memory, BufferDeleter{bytes});
  data_ = memory;
}

void Tensor::BufferDeleter::operator()(void* p) const noexcept { free_tensor_memory(p, bytes); }

Tensor::Tensor(Tensor&& other) noexcept
    : dtype_(other.dtype_),
      layout_(other.layout_),
      shape_(std::move(other.shape_)),
      num_elements_(other.num_elements_),
      buffer_(std::move(other.buffer_)),
      data_(other.data_),
      owner_(std::move(other.owner_)),
      variant_(std::move(other.variant_)),
      strings_(std::move(other.strings_)) {
  other.data_ = nullptr;
}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  dtype_ = other.dtype_;
  layout_ = other.layout_;
  shape_ = std::move(other.shape_);
  num_elements_ = other.num_elements_;
  buffer_ = std::move(other.buffer_);
  data_ = other.data_;
  other.data_ = nullptr;
  owner_ = std::move(other.owner_);
  variant_ = std::move(other.variant_);
  strings_ = std::move(other.strings_);
  return *this;
}

Tensor Tensor::borrowed(DataType dtype, Shape shape, int64_t count, const void* data,
                        std::shared_ptr<const void> owner) {
  Tensor tensor(std::shared_ptr<const VariantValue>(), dtype, std::move(shape), count);
  // Writable in type only: kernels never write a tensor someone else holds.
  tensor.data_ = const_cast<void*>(data);
  tensor.owner_ = std::move(owner);
  return tensor;
}

Tensor::Tensor(std::shared_ptr<const VariantValue>, DataType dtype, Shape shape, int64_t count)
    : dtype_(dtype), shape_(std::move(shape)), num_elements_(count) {}

Tensor::Tensor(std::shared_ptr<const VariantValue> value)
    : dtype_(graphdef::DT_VARIANT), num_elements_(1), variant_(std::move(value)) {
  if (!variant_) throw Error("internal error: a variant tensor without a value");
}

Tensor Tensor::variant(std::shared_ptr<const VariantValue> value) { return Tensor(std::move(value)); }

const Strings& Tensor::strings() const {
  if (!strings_) throw Error("internal error: a " + dtype_name(dtype_) + " tensor was read as strings");
  return *strings_;
}

uint64_t Tensor::string_bytes() const {
  uint64_t total = 0;
  for (const std::string& s : strings()) total += s.size();
  return total;
}

const VariantValue& Tensor::variant_value() const {
  if (!variant_) throw Error("internal error: a " + dtype_name(dtype_) + " tensor was read as a variant");
  return *variant_;
}

void Tensor::set_layout(Layout layout) {
  if (layout == Layout::kChannelBlocks8 && (dtype_ != graphdef::DT_FLOAT || shape_.size() != 4 || shape_[3] % 8 != 0)) {
    throw Error("internal error: channel blocks of 8 for a " + dtype_name(dtype_) + " " + shape_string(shape_));
  }
  layout_ = layout;
}

namespace {

// The element count of `shape`, or -1 if a dim is negative or it overflows.
int64_t count_of(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count)) return -1;
  }
  return count;
}

}  // namespace

Tensor Tensor::reshaped(Shape shape) && {
  if (variant_ || layout_ != Layout::kPlain || owner_) return static_cast<const Tensor&>(*this).reshaped(shape);
  // the size limit as for a new tensor: with a 0 dim the others could still be huge
  if (checked_num_elements(shape, dtype_) != num_elements_) {
    throw Error("cannot reshape " + shape_string(shape_) + " into " + shape_string(shape));
  }
  Tensor out = std::move(*this);
  out.shape_ = std::move(shape);
  return out;
}

Tensor Tensor::reshaped(Shape shape) const& {
  if (variant_) throw Error("a variant (" + variant_->type_name() + ") cannot be reshaped");
  if (layout_ != Layout::kPlain) throw Error("internal error: a tensor in channel blocks reshaped");
  if (owner_) {  // borrowed memory is shared under the new shape, not copied
    const int64_t count = count_of(shape);
    if (count != num_elements_) {
      throw Error("cannot reshape " + shape_string(shape_) + " into " + shape_string(shape));
    }
    return borrowed(dtype_, std::move(shape), count, data_, owner_);
  }
  Tensor out(dtype_, std::move(shape));
  if (out.num_elements() != num_elements_) {
    throw Error("cannot reshape " + shape_string(shape_) + " into " + shape_string(out.shape()));
  }
  if (strings_) *out.strings_ = *strings_;
  else if (byte_size() > 0) std::memcpy(out.raw_data(), raw_data(), byte_size());
  return out;
}

void Tensor::check_type(DataType requested) const {
  if (requested != dtype_) {
    throw Error("internal error: a " + dtype_name(dtype_) + " tensor was read as " + dtype_name(requested));
  }
}

}  // namespace graphrun
