// A dense tensor: a dtype, a shape and one contiguous row-major buffer.
// A DT_STRING tensor keeps its elements as std::string objects instead
// (Tensor::Strings), row-major alike; data<std::string>() reaches them.
//
// Tensors are built once and then shared read-only between nodes as
// std::shared_ptr<const Tensor>, so passing a value along (Identity, a fetch, a
// variable read) never copies its elements.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace graphrun {

using Shape = std::vector<int64_t>;

// How a tensor's elements lie in its buffer. kPlain is row-major, as the
// shape reads, for every tensor a kernel sees unless it asked otherwise.
// kChannelBlocks8 is oneDNN's nChw8c for a float32 [N, H, W, C] with C a
// multiple of 8: [N][C/8][H][W][8], eight channels of a pixel side by side.
// oneDNN's depthwise and pointwise convolutions run much faster on it than
// on NHWC at larger batches. Only the convolution kernels ever read or write
// it (the executor hands every other kernel, and every fetch, a plain copy:
// core/channel_blocks.h); the element count and buffer size are the same.
enum class Layout : unsigned char { kPlain, kChannelBlocks8 };

// What a DT_VARIANT scalar holds (a TensorList, core/tensor_list.h). Only the
// kernels that made it know its type; everything else (printing, saving,
// feeding, arithmetic) refuses a variant with a clear error instead of
// looking at bytes it does not have.
class VariantValue {
 public:
  virtual ~VariantValue() = default;
  // "TensorList", for messages.
  virtual std::string type_name() const = 0;
};

// The elements of a DT_STRING tensor. std::string objects cannot live in the
// byte buffer (kernels memcpy buffers, and the buffer is never destructed
// element by element), so they live in a vector of their own, the way a
// variant keeps its value beside the buffer.
using Strings = std::vector<std::string>;

// Throws TensorLimitError unless `total` bytes of strings fit under
// max_tensor_bytes(), worded as the Python runtime words it: "the output's
// strings would take 3.0 GiB, over the limit of ...". Called where strings
// come in from files (feeds) or are repeated (Fill, Tile).
void check_string_bytes(uint64_t total, const char* what = "the output's");

// "[2,3]"; "[]" for a scalar.
std::string shape_string(const Shape& shape);

// The element count, after checking every dim is >= 0 and that a tensor of
// this shape and dtype fits under max_tensor_bytes() (tensor_limit.h), with
// every product overflow-checked. Throws Error otherwise, worded to follow a
// node's name: "output [1000000,1000000] float32 would take 3.6 TiB, over the
// limit of 24.0 GiB (set GRAPHDEF_MAX_TENSOR_BYTES to change it)". `what`
// names the tensor ("tensor" for a Const's value, as the Python runtime says).
int64_t checked_num_elements(const Shape& shape, DataType dtype, const char* what = "output");

class Tensor {
 public:
  // Zero-filled. Throws Error for an unsupported dtype or an oversized shape.
  Tensor(DataType dtype, Shape shape);

  // With unspecified contents, for a kernel that writes every element: a
  // large output then costs no zero-filling pass before the real one.
  static Tensor uninitialized(DataType dtype, Shape shape);

  // A scalar of dtype DT_VARIANT holding `value` (shared, never copied: a
  // variant is as immutable as any other tensor). It has no element buffer:
  // data<T>() and raw_data() of it throw or return nullptr.
  static Tensor variant(std::shared_ptr<const VariantValue> value);

  // A tensor whose elements are `count` values at `data`, memory that
  // `owner` keeps alive (a mapped weights file, io/mapped_file.h): nothing is
  // copied or allocated, so it is not checked against max_tensor_bytes(). The
  // caller has checked that `shape` holds `count` elements and the memory as
  // many bytes. The memory may be read-only: such a tensor must only ever be
  // shared as a TensorPtr that something else also holds, never reused in place.
  static Tensor borrowed(DataType dtype, Shape shape, int64_t count, const void* data,
                         std::shared_ptr<const void> owner);

  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;

  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t num_elements() const { return num_elements_; }
  // Throws for a string tensor (dtype_size does): its elements are not bytes.
  std::size_t byte_size() const { return variant_ ? 0 : static_cast<std::size_t>(num_elements_) * dtype_size(dtype_); }
  bool is_variant() const { return dtype_ == graphdef::DT_VARIANT; }
  bool is_string() const { return dtype_ == graphdef::DT_STRING; }
  Layout layout() const { return layout_; }
  // For the kernel that wrote the elements in `layout` (kChannelBlocks8 only
  // for a float32 [N, H, W, C] with C % 8 == 0), before it shares the tensor.
  void set_layout(Layout layout);
  // Its elements are memory it does not own (Tensor::borrowed), maybe read-only.
  bool is_borrowed() const { return owner_ != nullptr; }
  // The value of a variant scalar; throws Error for any other tensor.
  const VariantValue& variant_value() const;

  // Typed element access; the requested type must be the tensor's dtype, so a
  // kernel bug can never reinterpret one type's bytes as another's.
  template <class T>
  T* data() {
    check_type(dtype_of<T>());
    if constexpr (std::is_same_v<T, std::string>) return strings_->data();
    else return static_cast<T*>(data_);
  }
  template <class T>
  const T* data() const {
    check_type(dtype_of<T>());
    if constexpr (std::is_same_v<T, std::string>) return strings_->data();
    else return static_cast<const T*>(data_);
  }

  // nullptr for a string tensor, which has no byte buffer.
  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }

  // A string tensor's elements (data<std::string>() as a vector); throws for
  // any other tensor.
  const Strings& strings() const;
  // The total bytes of its strings.
  uint64_t string_bytes() const;

  // A same-dtype tensor with the same elements under another shape with the
  // same element count (Reshape): a copy of owned elements, borrowed ones
  // shared.
  Tensor reshaped(Shape shape) const&;
  // The same, taking this tensor's elements over: never a copy.
  Tensor reshaped(Shape shape) &&;

 private:
  // Gives the buffer back to core/tensor_memory.h, which needs its size.
  struct BufferDeleter {
    std::size_t bytes;
    void operator()(void* p) const noexcept;
  };
  Tensor(DataType dtype, Shape shape, bool zeroed);
  explicit Tensor(std::shared_ptr<const VariantValue> value);
  // borrowed(): the fields alone (the first argument only tells this constructor apart).
  Tensor(std::shared_ptr<const VariantValue>, DataType dtype, Shape shape, int64_t count);
  void check_type(DataType requested) const;

  DataType dtype_;
  Layout layout_ = Layout::kPlain;
  Shape shape_;
  int64_t num_elements_;
  std::unique_ptr<void, BufferDeleter> buffer_;  // owned elements (none when borrowed)
  void* data_ = nullptr;                        // the elements: buffer_'s, or borrowed memory
  std::shared_ptr<const void> owner_;           // what keeps borrowed memory alive
  std::shared_ptr<const VariantValue> variant_;  // DT_VARIANT only
  std::unique_ptr<Strings> strings_;             // DT_STRING only (data_ stays nullptr)
};

using TensorPtr = std::shared_ptr<const Tensor>;

}  // namespace graphrun
