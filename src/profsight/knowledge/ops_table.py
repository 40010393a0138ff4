"""The op glossary's data: what each operator, autograd node and runtime call does.

`GLOSSARY` maps exact names, as traces and printed tables spell them, to one sentence each
(no final full stop): what the op computes and, where it helps reading a profile, what its
self and total time say. `profsight.knowledge.ops` derives the names this table leaves out
(overloads, in-place forms, backward nodes, HIP mirrors of CUDA calls, ...) from it.

Categories keep ATen-level work with the kind of computation it does, even in backward
(``aten::convolution_backward`` is "convolution"), so a breakdown by category shows where
compute goes; only autograd's own nodes (``ConvolutionBackward0``) are "autograd". Host API
calls are split by what they do to the host: "runtime" (launches, queries), "sync" (the CPU
waits for the device), "memcpy" (copies and fills of device memory) and "allocation".
The tables after it (notes, backward costs, collectives, name prefixes, runtime-call
keywords) are the data of `ops.lookup_op`'s rules. Written from the PyTorch sources and the
traces in ../shared/data/real; tests/data/top_ops.txt lists the names that must stay covered.
"""

from __future__ import annotations

from typing import Final

#: Category (a member of ``ops.CATEGORIES``) -> exact name -> meaning.
GLOSSARY: Final[dict[str, dict[str, str]]] = {
    "convolution": {
        "aten::conv1d": (
            "1-D convolution as called from nn.Conv1d / F.conv1d; the entry of a chain conv1d -> "
            "convolution -> _convolution -> cudnn_convolution/mkldnn_convolution/... that is one "
            "call seen at several levels, so its self time is tiny and its total is the "
            "convolution's"
        ),
        "aten::conv2d": (
            "2-D convolution as called from nn.Conv2d / F.conv2d; the entry of a chain conv2d -> "
            "convolution -> _convolution -> cudnn_convolution/mkldnn_convolution that is one call "
            "seen at four levels, so its self time is tiny and its total is the convolution's"
        ),
        "aten::conv3d": (
            "3-D convolution as called from nn.Conv3d / F.conv3d (video, volumetric data); the "
            "entry of a chain conv3d -> convolution -> _convolution -> backend op, so its self "
            "time is tiny and its total is the convolution's"
        ),
        "aten::conv_transpose1d": (
            "1-D transposed (fractionally strided) convolution from nn.ConvTranspose1d, used to "
            "upsample; it dispatches through convolution -> _convolution to the backend, so its "
            "self time is small and its total is the convolution's"
        ),
        "aten::conv_transpose2d": (
            "2-D transposed (fractionally strided) convolution from nn.ConvTranspose2d, used to "
            "upsample in decoders and GAN generators; it dispatches through convolution -> "
            "_convolution to cudnn_convolution_transpose or a CPU kernel, so its own self time is "
            "small"
        ),
        "aten::conv_transpose3d": (
            "3-D transposed convolution from nn.ConvTranspose3d; it dispatches through convolution "
            "-> _convolution to the backend, so its own self time is small"
        ),
        "aten::convolution": (
            "the device-independent convolution entry that every convNd and conv_transposeNd call "
            "goes through; it only forwards to aten::_convolution, so its self time is dispatch "
            "overhead and its total is the convolution's"
        ),
        "aten::_convolution": (
            "the backend selector of a convolution: it checks shapes, picks cuDNN, MIOpen, oneDNN "
            "(mkldnn), a depthwise kernel or the slow im2col path, and makes inputs contiguous in "
            "the chosen memory format (those copies show as contiguous children); its self time is "
            "that bookkeeping, its total the backend op's"
        ),
        "aten::_convolution_mode": (
            "a convolution whose padding is given as a string ('same' or 'valid'): it works out "
            "the padding (padding the input itself when 'same' is asymmetric) and calls "
            "aten::convolution"
        ),
        "aten::cudnn_convolution": (
            "the cuDNN convolution on NVIDIA GPUs, the leaf of the conv2d -> convolution -> "
            "_convolution chain; its device time is the convolution kernels themselves (implicit "
            "GEMM, Winograd or FFT, picked by cuDNN heuristics or by "
            "torch.backends.cudnn.benchmark), so high self device time here is the network's real "
            "convolution work"
        ),
        "aten::cudnn_convolution_transpose": (
            "cuDNN transposed convolution (cuDNN's backward-data algorithm run as a forward op); "
            "its device time is the real work of an nn.ConvTranspose layer"
        ),
        "aten::cudnn_convolution_relu": (
            "cuDNN convolution fused with ReLU in one call, produced by inference optimisations "
            "(torch.jit.freeze / optimize_for_inference) that fold Conv+ReLU"
        ),
        "aten::cudnn_convolution_add_relu": (
            "cuDNN convolution fused with a residual add and ReLU, produced by inference "
            "optimisations (torch.jit.freeze / optimize_for_inference) on Conv+Add+ReLU patterns "
            "such as ResNet blocks"
        ),
        "aten::mkldnn_convolution": (
            "the oneDNN (MKL-DNN) convolution used on CPU for float and bfloat16 tensors; this is "
            "where a CPU convolution's time is actually spent, so its self CPU time is the "
            "convolution's compute"
        ),
        "aten::miopen_convolution": (
            "AMD MIOpen convolution on ROCm GPUs, the counterpart of cudnn_convolution; its device "
            "time is the convolution kernels"
        ),
        "aten::miopen_convolution_transpose": (
            "AMD MIOpen transposed convolution on ROCm GPUs, the counterpart of "
            "cudnn_convolution_transpose"
        ),
        "aten::miopen_depthwise_convolution": (
            "AMD MIOpen depthwise convolution (groups == input channels) on ROCm GPUs"
        ),
        "aten::_conv_depthwise2d": (
            "PyTorch's own CUDA kernel for depthwise 2-D convolution (groups == channels, as in "
            "MobileNet/EfficientNet) when cuDNN is not used; memory-bound, so its time grows with "
            "activation size rather than FLOPs"
        ),
        "aten::_slow_conv2d_forward": (
            "the fallback im2col + GEMM 2-D convolution used when no cuDNN/oneDNN kernel fits the "
            "dtype, layout or device; it unfolds the input into a large column buffer and "
            "multiplies, so it is memory-hungry and often much slower than the library paths"
        ),
        "aten::thnn_conv2d": (
            "the fallback im2col + GEMM 2-D convolution under its older name (before "
            "aten::_slow_conv2d_forward); memory-hungry and usually much slower than cuDNN/oneDNN"
        ),
        "aten::slow_conv_transpose2d": (
            "the fallback col2im-based transposed 2-D convolution used when no library kernel "
            "applies; slow and memory-hungry"
        ),
        "aten::_nnpack_spatial_convolution": (
            "NNPACK's CPU convolution (fast FFT/Winograd algorithms), picked on some CPU builds "
            "for 2-D float convolutions without oneDNN"
        ),
        "aten::convolution_overrideable": (
            "the convolution hook that out-of-tree backends (XLA, PrivateUse1 devices) implement "
            "to supply their own convolution"
        ),
        "aten::convolution_backward": (
            "computes a convolution's gradients (for the input, the weight and the bias, as "
            "requested) in one op called by ConvolutionBackward0; it calls the backend (cuDNN, "
            "MIOpen, oneDNN, fallback) directly, so its device time is the two backward "
            "convolutions, usually about twice the forward's"
        ),
        "aten::cudnn_convolution_backward": (
            "cuDNN convolution backward in torch < 1.11: calls cudnn_convolution_backward_input "
            "and cudnn_convolution_backward_weight, so its total is both gradients"
        ),
        "aten::cudnn_convolution_backward_input": (
            "cuDNN backward-data: the gradient with respect to the convolution's input (the output "
            "gradient convolved with the flipped weights); costs about as much as the forward"
        ),
        "aten::cudnn_convolution_backward_weight": (
            "cuDNN backward-filter: the gradient with respect to the weights (the input correlated "
            "with the output gradient, summed over the batch); often the slowest of the three "
            "convolution passes"
        ),
        "aten::cudnn_convolution_transpose_backward": (
            "cuDNN backward of a transposed convolution (torch < 1.11), computing input and weight "
            "gradients"
        ),
        "aten::mkldnn_convolution_backward": (
            "oneDNN convolution backward on CPU (input, weight and bias gradients); where a CPU "
            "convolution's backward time is spent"
        ),
        "aten::miopen_convolution_backward": (
            "AMD MIOpen convolution backward on ROCm GPUs (input, weight and bias gradients)"
        ),
        "aten::_slow_conv2d_backward": (
            "the fallback im2col + GEMM convolution backward, used when the forward took the "
            "fallback path; slow and memory-hungry"
        ),
        "aten::thnn_conv2d_backward": (
            "the fallback im2col + GEMM convolution backward under its older name; slow and "
            "memory-hungry"
        ),
        "aten::im2col": (
            "unfolds sliding patches of an image into columns (nn.Unfold / F.unfold); "
            "memory-bound, and what the fallback convolution does internally"
        ),
        "aten::col2im": (
            "folds columns of patches back into an image, summing overlaps (nn.Fold / F.fold); the "
            "inverse of im2col"
        ),
    },
    "matmul": {
        "aten::linear": (
            "y = x Wᵀ + b from nn.Linear / F.linear; it calls t (a free view of the weight) and "
            "addmm, folding extra leading dims of x with views, or matmul -> mm without a bias, so "
            "its self time is small and its total is the matrix multiply's"
        ),
        "aten::matmul": (
            "torch.matmul / the @ operator: broadcasts and folds batch dims, then calls mm (2-D), "
            "bmm (batched) or mv/dot (vectors); its self time is the reshaping, and a clone or "
            "copy_ under it means an operand had to be made contiguous first"
        ),
        "aten::mm": (
            "matrix multiply of two 2-D tensors: a GEMM from cuBLAS/cuBLASLt (hipBLASLt on ROCm) "
            "on GPU or MKL/oneDNN on CPU; its device time (on CPU its self time) is the GEMM "
            "itself, compute-bound for large shapes and launch-bound for tiny ones"
        ),
        "aten::addmm": (
            "beta·bias + mat1 @ mat2 in one GEMM, what nn.Linear runs for 2-D input (the bias is "
            "added by the GEMM's epilogue; on CPU it is first copied into the output, hence expand "
            "and copy_ children); its time is the GEMM's"
        ),
        "aten::_addmm_activation": (
            "addmm fused with a ReLU or GELU epilogue in one cuBLASLt call, used when a Linear + "
            "activation pair is fused"
        ),
        "aten::bmm": (
            "batched matrix multiply, [B, n, m] @ [B, m, p], issued as one strided-batched GEMM; "
            "the workhorse of attention (Q·Kᵀ and the weighted sum of V) in unfused "
            "implementations and of matmul on 3-D tensors"
        ),
        "aten::baddbmm": (
            "beta·input + alpha·(batch1 @ batch2): a batched GEMM with an added term, used by "
            "attention code that adds a bias or mask to Q·Kᵀ"
        ),
        "aten::addbmm": (
            "beta·input + alpha·Σ_b batch1[b] @ batch2[b]: batched matrix products summed over the "
            "batch into one matrix"
        ),
        "aten::addmv": (
            "beta·vec + alpha·(mat @ vec): a matrix-vector product (GEMV) with an added vector, "
            "memory-bound"
        ),
        "aten::mv": (
            "matrix-vector product (GEMV); memory-bound since every matrix element is read once"
        ),
        "aten::dot": "dot product of two 1-D tensors, returning a 0-dim tensor",
        "aten::vdot": "dot product of two 1-D tensors with the first conjugated",
        "aten::outer": "outer product of two vectors, an [n, m] matrix",
        "aten::einsum": (
            "torch.einsum: parses the equation and lowers it to permutes, reshapes and bmm (or "
            "mul/sum); its self time is the planning and its total the products it issues"
        ),
        "aten::tensordot": (
            "contracts the given dims of two tensors by permuting and reshaping both into matrices "
            "and calling mm; its time is the mm plus any copies needed to make the operands "
            "contiguous"
        ),
        "aten::_scaled_mm": (
            "FP8 (or other scaled low-precision) matrix multiply with per-tensor or per-row "
            "scales, run on tensor cores of Hopper/Blackwell-class GPUs (torchao float8 training, "
            "FP8 inference)"
        ),
        "aten::_int_mm": "int8 x int8 -> int32 matrix multiply (quantised inference)",
        "aiter::gemm_a16w16": (
            "AMD aiter GEMM with 16-bit (bf16/fp16) activations and weights, used by sglang/vLLM "
            "on ROCm in place of aten::mm for linear layers; its device time is the GEMM"
        ),
        "vllm::rocm_unquantized_gemm": (
            "vLLM's ROCm linear-layer op for unquantised weights: picks a skinny-GEMM kernel for "
            "small token counts or falls back to the hipBLASLt GEMM"
        ),
        "vllm::moe_forward": (
            "vLLM's fused mixture-of-experts layer: routes each token to its top-k experts and "
            "runs the experts' grouped GEMMs (fused_moe kernels); its total is the whole MoE block"
        ),
    },
    "normalization": {
        "aten::batch_norm": (
            "batch normalisation from nn.BatchNorm*: normalises each channel by its mean and "
            "variance (of the batch in training, the running statistics in eval) then scales and "
            "shifts; the entry of a chain batch_norm -> _batch_norm_impl_index -> "
            "cudnn_batch_norm/native_batch_norm that is one call seen at three levels, so its self "
            "time is tiny and its total is the normalisation's"
        ),
        "aten::_batch_norm_impl_index": (
            "the low-level batch-norm step that picks the backend (cuDNN, MIOpen or PyTorch's "
            "native kernels) and returns an index telling autograd which backward to use; its self "
            "time is that choice, its total the backend op's"
        ),
        "aten::cudnn_batch_norm": (
            "cuDNN batch normalisation on NVIDIA GPUs: computes the batch statistics, normalises "
            "and updates the running mean/variance in training; memory-bound (it reads the "
            "activation about twice), so its time follows activation size, not FLOPs"
        ),
        "aten::miopen_batch_norm": (
            "AMD MIOpen batch normalisation on ROCm GPUs, the counterpart of cudnn_batch_norm; "
            "memory-bound"
        ),
        "aten::native_batch_norm": (
            "PyTorch's own batch-norm kernels, used on CPU and when cuDNN/MIOpen is not eligible: "
            "per-channel statistics, then normalise, scale and shift; memory-bound"
        ),
        "aten::_native_batch_norm_legit": (
            "functional form of native batch norm (running statistics passed explicitly) used by "
            "torch.compile/export decompositions; same work as native_batch_norm"
        ),
        "aten::_native_batch_norm_legit_no_training": (
            "eval-mode functional batch norm (uses the running statistics) from "
            "torch.compile/export decompositions"
        ),
        "aten::_batch_norm_with_update": (
            "training-mode batch norm entry (torch >= 2.3) that also updates the running "
            "statistics; it dispatches to the cuDNN, MIOpen or native kernel"
        ),
        "aten::_batch_norm_no_update": (
            "eval-mode batch norm entry (torch >= 2.3) that leaves the running statistics unchanged"
        ),
        "aten::cudnn_batch_norm_backward": (
            "cuDNN batch-norm backward: from the saved mean and inverse std it computes the input, "
            "weight and bias gradients in reduction-heavy passes; memory-bound like the forward"
        ),
        "aten::miopen_batch_norm_backward": (
            "AMD MIOpen batch-norm backward on ROCm GPUs (input, weight and bias gradients)"
        ),
        "aten::native_batch_norm_backward": (
            "PyTorch's own batch-norm backward (CPU, or GPU without cuDNN): reduces the output "
            "gradient per channel, then forms the input, weight and bias gradients; memory-bound"
        ),
        "aten::batch_norm_backward": (
            "batch-norm backward entry (torch >= 2.3) that dispatches to the cuDNN, MIOpen or "
            "native backward"
        ),
        "aten::batch_norm_stats": (
            "SyncBatchNorm step: per-GPU mean and inverse std of each channel, before they are "
            "all-gathered across ranks"
        ),
        "aten::batch_norm_gather_stats_with_counts": (
            "SyncBatchNorm step: combines the per-rank means and variances (weighted by sample "
            "counts) into global statistics"
        ),
        "aten::batch_norm_elemt": (
            "SyncBatchNorm step: normalises, scales and shifts with the global statistics"
        ),
        "aten::batch_norm_backward_reduce": (
            "SyncBatchNorm backward step: per-GPU reductions of the output gradient that are then "
            "all-reduced across ranks"
        ),
        "aten::batch_norm_backward_elemt": (
            "SyncBatchNorm backward step: forms the input gradient from the all-reduced sums"
        ),
        "aten::layer_norm": (
            "layer normalisation from nn.LayerNorm: normalises each row over the last dims and "
            "applies the affine weight and bias; it only calls aten::native_layer_norm, so its "
            "total is that op's"
        ),
        "aten::native_layer_norm": (
            "the layer-norm kernel: computes each row's mean and reciprocal std, normalises and "
            "applies weight and bias, returning mean and rstd for the backward; memory-bound"
        ),
        "aten::native_layer_norm_backward": (
            "layer-norm backward: from the saved mean and rstd computes the input gradient row by "
            "row and reduces over rows for the weight and bias gradients; memory-bound"
        ),
        "aten::group_norm": (
            "group normalisation from nn.GroupNorm: normalises groups of channels per sample "
            "(batch-size independent, common in diffusion U-Nets and detection heads); forwards to "
            "aten::native_group_norm"
        ),
        "aten::native_group_norm": (
            "the group-norm kernel: per-(sample, group) mean and rstd, then normalise and apply "
            "the per-channel affine; memory-bound"
        ),
        "aten::native_group_norm_backward": (
            "group-norm backward: input, weight and bias gradients from the saved mean and rstd"
        ),
        "aten::instance_norm": (
            "instance normalisation (nn.InstanceNorm*): reshapes the input so each (sample, "
            "channel) pair is one batch-norm channel and calls aten::batch_norm; its total is that "
            "batch norm plus the reshapes"
        ),
        "aten::rms_norm": (
            "RMS normalisation (nn.RMSNorm / F.rms_norm): divides each row by its root mean square "
            "and scales by the weight, with no mean subtraction; recent torch calls the fused "
            "aten::_fused_rms_norm, otherwise it is pow, mean, rsqrt and mul ops"
        ),
        "aten::_fused_rms_norm": (
            "the fused RMSNorm kernel: one pass computes each row's reciprocal RMS and scales by "
            "the weight; memory-bound"
        ),
        "aten::_fused_rms_norm_backward": (
            "the fused RMSNorm backward: input and weight gradients from the saved reciprocal RMS"
        ),
        "aten::local_response_norm": (
            "local response normalisation (nn.LocalResponseNorm, AlexNet era), built from pow, "
            "avg_pool and div ops"
        ),
        "aten::renorm": (
            "rescales sub-tensors along a dim whose p-norm exceeds maxnorm (used by "
            "nn.Embedding(max_norm=...))"
        ),
        "aiter::rmsnorm": (
            "AMD aiter fused RMSNorm kernel on ROCm, used by sglang for the model's RMSNorm layers"
        ),
        "aiter::add_rmsnorm": (
            "AMD aiter fused residual add + RMSNorm: adds the residual and normalises in one "
            "kernel, returning the normalised output and the new residual"
        ),
        "_C::rms_norm": "vLLM's fused RMSNorm CUDA/HIP kernel",
        "_C::fused_add_rms_norm": (
            "vLLM's fused residual add + RMSNorm kernel, updating the input and the residual in "
            "place in one pass"
        ),
        "fb::rms_norm": (
            "Meta-internal RMSNorm op: scales each row by its reciprocal root mean square and a "
            "weight"
        ),
    },
    "activation": {
        "aten::relu": (
            "ReLU, max(x, 0), from nn.ReLU / F.relu; one elementwise pass (on CPU it is computed "
            "by its child aten::clamp_min), memory-bound and cheap, so a large share usually means "
            "many small calls"
        ),
        "aten::relu_": (
            "ReLU in place (nn.ReLU(inplace=True)), writing max(x, 0) over its input; one "
            "elementwise pass (on CPU via aten::clamp_min_), cheap and memory-bound"
        ),
        "aten::threshold": (
            "y = x where x > threshold, else value; older torch (and nn.Threshold) computed ReLU "
            "with it, so under relu it is the ReLU's actual work"
        ),
        "aten::threshold_": (
            "threshold in place (y = x where x > threshold, else value); older torch computed "
            "relu_ with it"
        ),
        "aten::threshold_backward": (
            "ReLU's gradient: passes the output gradient where the saved output (or input) is "
            "positive and zeroes it elsewhere, in one elementwise pass; what ReluBackward0 runs"
        ),
        "aten::clamp_min": (
            "max(x, min) elementwise; on CPU aten::relu is computed by it, so under relu it is the "
            "ReLU's actual work"
        ),
        "aten::clamp_min_": (
            "max(x, min) elementwise in place; on CPU aten::relu_ is computed by it, so under "
            "relu_ it is the ReLU's actual work"
        ),
        "aten::gelu": (
            "GELU, x·Φ(x) (exact erf form, or tanh approximation), from nn.GELU; one elementwise "
            "pass, memory-bound"
        ),
        "aten::gelu_backward": (
            "GELU's gradient, from the output gradient and the saved input; one elementwise pass"
        ),
        "aten::silu": (
            "SiLU / swish, x·sigmoid(x), from nn.SiLU; one elementwise pass, memory-bound"
        ),
        "aten::silu_backward": (
            "SiLU's gradient from the output gradient and the saved input; one elementwise pass"
        ),
        "aten::sigmoid": (
            "logistic sigmoid 1/(1+e^-x), elementwise; also inside LSTM/GRU gates and attention "
            "gating"
        ),
        "aten::sigmoid_backward": (
            "sigmoid's gradient, grad·y·(1−y) from the saved output y; one elementwise pass"
        ),
        "aten::tanh": (
            "hyperbolic tangent, elementwise (activations, RNN cells, the tanh form of GELU)"
        ),
        "aten::tanh_backward": (
            "tanh's gradient, grad·(1−y²) from the saved output y; one elementwise pass"
        ),
        "aten::hardtanh": (
            "clamps to [min_val, max_val] (nn.Hardtanh; ReLU6 is hardtanh(0, 6)); elementwise"
        ),
        "aten::hardtanh_backward": (
            "hardtanh's gradient: passes the gradient where the input was inside the clamp range"
        ),
        "aten::hardswish": "x·relu6(x+3)/6 (MobileNetV3); elementwise",
        "aten::hardsigmoid": (
            "relu6(x+3)/6, a piecewise-linear sigmoid (MobileNetV3 squeeze-excitation); elementwise"
        ),
        "aten::leaky_relu": "x where x > 0, else negative_slope·x (nn.LeakyReLU); elementwise",
        "aten::leaky_relu_backward": (
            "leaky ReLU's gradient: the output gradient scaled by 1 or negative_slope"
        ),
        "aten::elu": "ELU: x where x > 0, else alpha·(e^x − 1); elementwise",
        "aten::softplus": "log(1 + e^(βx))/β, a smooth ReLU; elementwise",
        "aten::mish": "x·tanh(softplus(x)) (YOLOv4-style nets); elementwise",
        "aten::glu": (
            "gated linear unit: splits the input in two halves a, b along a dim and returns "
            "a·sigmoid(b)"
        ),
        "aten::prelu": "ReLU with a learned negative slope per channel (nn.PReLU)",
        "aten::_prelu_kernel": "the elementwise kernel of PReLU, x where x > 0 else weight·x",
        "aten::log_sigmoid": (
            "log(sigmoid(x)) computed stably (nn.LogSigmoid, logistic losses); calls "
            "log_sigmoid_forward"
        ),
        "aten::log_sigmoid_forward": (
            "the log-sigmoid kernel, also returning a buffer for the backward"
        ),
        "aten::logit": "log(p/(1−p)), the inverse of sigmoid, with optional clamping eps",
        "aten::logit_backward": "logit's gradient, grad/(p·(1−p))",
        "sgl_kernel::silu_and_mul": (
            "sglang's fused SwiGLU: splits the gate/up projection in half and computes "
            "silu(gate)·up in one kernel (the MLP activation of Llama-style models)"
        ),
        "_C::silu_and_mul": (
            "vLLM's fused SwiGLU: silu(gate)·up over the two halves of the gate/up projection in "
            "one kernel"
        ),
    },
    "pointwise": {
        "aten::add": (
            "elementwise a + alpha·b with broadcasting (also tensor + scalar); one memory-bound "
            "pass, so its time scales with tensor size; in a ResNet block this is the skip "
            "connection x + F(x)"
        ),
        "aten::add_": (
            "in-place a += alpha·b, usually the most frequent op of a training step: gradient "
            "accumulation into .grad, optimizer updates (param.add_(update)), step counters, "
            "BatchNorm's num_batches_tracked and in-place residual adds; each call is tiny, so its "
            "cost is per-call overhead times the count"
        ),
        "aten::sub": "elementwise a − alpha·b with broadcasting; one memory-bound pass",
        "aten::rsub": (
            "reversed subtraction, b − alpha·a, which is what Python's scalar − tensor (e.g. 1 − "
            "mask) becomes; one elementwise pass"
        ),
        "aten::mul": (
            "elementwise product with broadcasting (also by a scalar: scaling, masking, gating); "
            "one memory-bound pass"
        ),
        "aten::mul_": (
            "in-place elementwise multiply; inside Optimizer.step these are per-parameter updates "
            "(SGD momentum, Adam's moment decay, AdamW's decoupled weight decay), whose many tiny "
            "calls make the step dispatch- and launch-bound"
        ),
        "aten::div": (
            "elementwise true division (or floor/trunc with rounding_mode), with broadcasting; "
            "dividing by a scalar is a rescale, e.g. the last step of mean or Adam's bias "
            "correction"
        ),
        "aten::neg": "elementwise negation, −x",
        "aten::abs": "elementwise absolute value (L1 losses and norms)",
        "aten::sgn": "elementwise sign (x/|x| for complex numbers); the gradient of abs",
        "aten::sign": "elementwise sign, −1, 0 or 1",
        "aten::pow": (
            "elementwise power x**p (scalar or tensor exponent); exponents 2, 0.5 and −1 use the "
            "square, sqrt and reciprocal kernels"
        ),
        "aten::sqrt": (
            "elementwise square root; in Adam/AdamW's step it takes the square root of the "
            "second-moment estimate for each parameter's denominator"
        ),
        "aten::rsqrt": (
            "elementwise 1/sqrt(x), used by normalisation (RMSNorm and LayerNorm written out) and "
            "attention scaling"
        ),
        "aten::square": "elementwise x², as pow(x, 2)",
        "aten::reciprocal": "elementwise 1/x, one memory-bound pass",
        "aten::exp": "elementwise e^x (softmax written out, attention, likelihoods)",
        "aten::exp2": "elementwise 2^x, one memory-bound pass",
        "aten::log": "elementwise natural logarithm",
        "aten::log2": "elementwise base-2 logarithm",
        "aten::log10": "elementwise base-10 logarithm",
        "aten::log1p": "elementwise log(1 + x), accurate for small x",
        "aten::expm1": "elementwise e^x − 1, accurate for small x",
        "aten::sin": "elementwise sine (rotary and sinusoidal position embeddings)",
        "aten::cos": "elementwise cosine (rotary and sinusoidal position embeddings)",
        "aten::erf": "elementwise Gauss error function (exact GELU)",
        "aten::erfinv": "elementwise inverse error function (truncated-normal initialisation)",
        "aten::floor": "elementwise round down, one memory-bound pass",
        "aten::ceil": "elementwise round up, one memory-bound pass",
        "aten::round": "elementwise round to nearest (half to even)",
        "aten::trunc": "elementwise round toward zero",
        "aten::frac": "elementwise fractional part",
        "aten::fmod": "elementwise C-style remainder (sign of the dividend)",
        "aten::remainder": "elementwise Python-style remainder (sign of the divisor), x % y",
        "aten::floor_divide": "elementwise floor division, x // y",
        "aten::maximum": "elementwise maximum of two tensors",
        "aten::minimum": "elementwise minimum of two tensors",
        "aten::clamp": (
            "clamps every element into [min, max]; elementwise (gradient or value clipping, ReLU6)"
        ),
        "aten::clamp_max": "min(x, max) elementwise",
        "aten::clip": "alias of clamp: clamps every element into [min, max]",
        "aten::where": (
            "elementwise select, out = cond ? a : b, with broadcasting; used for masking and for "
            "NaN-safe formulas"
        ),
        "aten::_s_where": (
            "the kernel behind aten::where in older torch (after broadcasting), elementwise select"
        ),
        "aten::eq": (
            "elementwise ==, producing a bool tensor (e.g. (pred == target) in accuracy metrics)"
        ),
        "aten::ne": "elementwise !=, producing a bool tensor",
        "aten::gt": "elementwise >, producing a bool tensor",
        "aten::ge": "elementwise >=, producing a bool tensor",
        "aten::lt": "elementwise <, producing a bool tensor",
        "aten::le": "elementwise <=, producing a bool tensor",
        "aten::logical_and": "elementwise logical AND, producing a bool tensor (combining masks)",
        "aten::logical_or": "elementwise logical OR, producing a bool tensor",
        "aten::logical_not": "elementwise logical NOT, producing a bool tensor",
        "aten::logical_xor": "elementwise logical XOR, producing a bool tensor",
        "aten::bitwise_and": "elementwise bitwise AND (& on integer or bool tensors)",
        "aten::bitwise_or": "elementwise bitwise OR (| on integer or bool tensors)",
        "aten::bitwise_not": "elementwise bitwise NOT (~ on integer or bool tensors)",
        "aten::bitwise_xor": "elementwise bitwise XOR (^ on integer or bool tensors)",
        "aten::isnan": "elementwise test for NaN, producing a bool tensor",
        "aten::isinf": "elementwise test for ±inf, producing a bool tensor",
        "aten::isfinite": (
            "elementwise test for finite values, producing a bool tensor (AMP and anomaly checks)"
        ),
        "aten::nan_to_num": "replaces NaN and ±inf with finite numbers, elementwise",
        "aten::addcmul": "a + value·b·c elementwise in one pass",
        "aten::addcdiv": "a + value·b/c elementwise in one pass",
        "aten::lerp": "linear interpolation a + weight·(b − a), elementwise",
        "aten::diff": "torch.diff: x[1:] − x[:-1] along a dim, built from slices and a subtraction",
        "aten::fill_": (
            "writes one value into every element; behind torch.full/ones and zero_, a memset-like "
            "memory-bound pass"
        ),
        "aten::zero_": (
            "sets every element to 0 (via fill_): behind torch.zeros, zero_grad(set_to_none=False) "
            "and output buffers that must start at zero; memory-bound"
        ),
        "aten::sigmoid_": "logistic sigmoid in place",
        "aten::copysign": "elementwise magnitude of a with the sign of b",
        "aten::heaviside": "elementwise step function",
        "aten::xlogy": "elementwise x·log(y), defined as 0 where x = 0 (entropy and KL terms)",
    },
    "reduction": {
        "aten::sum": (
            "sums over all or some dims; in backward it also reduces a broadcast gradient to a "
            "smaller input's shape (e.g. a Linear bias's gradient, summed over the batch); one "
            "memory-bound reduction"
        ),
        "aten::mean": (
            "average over dims, computed as a sum then a divide (on CPU as aten::sum + aten::div_ "
            "children); also global average pooling and the averaging of per-sample losses"
        ),
        "aten::var": "variance over dims (with Bessel's correction by default)",
        "aten::std": "standard deviation over dims",
        "aten::var_mean": "variance and mean in one pass",
        "aten::std_mean": "standard deviation and mean in one pass",
        "aten::prod": "product of the elements over all or some dims, a reduction",
        "aten::max": (
            "maximum: of all elements (a 0-dim tensor, no sync), along a dim (values and indices), "
            "or elementwise between two tensors"
        ),
        "aten::min": (
            "minimum: of all elements, along a dim (values and indices), or elementwise between "
            "two tensors"
        ),
        "aten::amax": (
            "maximum over dims, values only (e.g. the stabilising shift in softmax written out)"
        ),
        "aten::amin": "minimum over dims, values only",
        "aten::aminmax": "minimum and maximum over dims in one pass (observers in quantisation)",
        "aten::argmax": (
            "index of the maximum along a dim, e.g. out.argmax(1) for predicted classes in "
            "accuracy metrics or greedy decoding"
        ),
        "aten::argmin": "index of the minimum along a dim",
        "aten::cumsum": (
            "inclusive prefix sum along a dim (a scan); turns lengths into offsets, builds "
            "position ids"
        ),
        "aten::cumprod": "inclusive prefix product along a dim",
        "aten::logsumexp": "log(Σ e^x) over dims, computed stably by shifting by the max",
        "aten::norm": (
            "Tensor.norm / torch.norm (older API): a p-norm over dims or the whole tensor"
        ),
        "aten::linalg_vector_norm": (
            "vector p-norm over dims (torch.linalg.vector_norm, Tensor.norm); clip_grad_norm_ "
            "computes one per gradient and then the norm of the norms"
        ),
        "aten::linalg_norm": "torch.linalg.norm: dispatches to a vector norm or a matrix norm",
        "aten::frobenius_norm": (
            "Frobenius norm (square root of the sum of squares) of a matrix, older API"
        ),
        "aten::all": (
            "True if all elements (along a dim) are non-zero; a bool tensor, so using it in a "
            "Python if reads it back (a sync on GPU)"
        ),
        "aten::any": (
            "True if any element (along a dim) is non-zero; a bool tensor, so using it in a Python "
            "if reads it back (a sync on GPU)"
        ),
        "aten::count_nonzero": "number of non-zero elements along dims",
        "aten::topk": (
            "the k largest (or smallest) values and their indices along a dim (top-k accuracy, "
            "beam search, sampling); a partial sort"
        ),
        "aten::kthvalue": "the k-th smallest value and its index along a dim",
        "aten::median": "median value (and index) over a dim",
        "aten::mode": "most frequent value (and index) along a dim",
        "aten::value_selecting_reduction_backward": (
            "backward of max/min/median/kthvalue along a dim: writes the gradient into a zero "
            "tensor at the saved indices"
        ),
        "aten::sum_to_size": (
            "sums a tensor down to a broadcast-compatible smaller size (gradient of broadcasting)"
        ),
        "_grad_sum_to_size": (
            "TorchScript autodiff op that sums a gradient down to the size of a broadcast input "
            "(the script graph's aten::sum_to_size)"
        ),
        "aten::equal": (
            "True if two tensors have the same shape and elements, returned as a Python bool, so "
            "on GPU the CPU waits for the comparison and copies the answer back (a sync)"
        ),
        "aten::allclose": (
            "True if two tensors are elementwise close, returned as a Python bool, so on GPU the "
            "CPU waits for the result (a sync)"
        ),
    },
    "softmax": {
        "aten::softmax": (
            "softmax along a dim, e^x / Σ e^x; forwards to aten::_softmax after any dtype cast, so "
            "its total is that kernel's"
        ),
        "aten::_softmax": (
            "the softmax kernel: a max, an exp-sum and a normalise pass over each row; memory-bound"
        ),
        "aten::_safe_softmax": (
            "softmax that returns 0 instead of NaN for fully masked rows (the math SDPA path, "
            "torch >= 2.5)"
        ),
        "aten::_masked_softmax": (
            "softmax with a boolean mask applied inside the kernel (nn.MultiheadAttention / "
            "TransformerEncoder fast path)"
        ),
        "aten::log_softmax": (
            "log of softmax along a dim, computed stably (the first half of cross entropy); "
            "forwards to aten::_log_softmax after any dtype cast"
        ),
        "aten::_log_softmax": (
            "the log-softmax kernel: x − max − log Σ e^(x − max) per row; memory-bound"
        ),
        "aten::_softmax_backward_data": (
            "softmax's gradient, y·(grad − Σ grad·y) per row, from the saved output y"
        ),
        "aten::_log_softmax_backward_data": (
            "log-softmax's gradient, grad − e^y·Σ grad per row, from the saved output y"
        ),
        "aten::special_softmax": "torch.special.softmax, same as softmax",
    },
    "loss": {
        "aten::cross_entropy_loss": (
            "nn.CrossEntropyLoss / F.cross_entropy: log_softmax over the classes followed by "
            "nll_loss (both appear as its children), with label smoothing and class weights "
            "handled here; its self time is small and its total is both ops"
        ),
        "aten::nll_loss_nd": (
            "negative log-likelihood loss for inputs of any rank: reshapes as needed and calls "
            "nll_loss (or nll_loss2d for images)"
        ),
        "aten::nll_loss": (
            "negative log-likelihood loss from log-probabilities: forwards to "
            "aten::nll_loss_forward"
        ),
        "aten::nll_loss_forward": (
            "the NLL kernel: picks −log p of each sample's target class, applies class weights and "
            "ignore_index, and averages or sums; cheap, since it touches one value per sample"
        ),
        "aten::nll_loss_backward": (
            "NLL's gradient: writes −weight/N at each sample's target class into a zeroed tensor "
            "of the input's shape (hence its zero_ child)"
        ),
        "aten::nll_loss2d_forward": (
            "NLL loss over a spatial map (per-pixel classification, segmentation)"
        ),
        "aten::nll_loss2d_backward": "gradient of the per-pixel NLL loss",
        "aten::mse_loss": "mean squared error, mean((x − y)²) (nn.MSELoss)",
        "aten::mse_loss_backward": "MSE's gradient, 2·(x − y)·grad/N",
        "aten::l1_loss": (
            "mean absolute error, mean(|x − y|) (nn.L1Loss), built from sub, abs and mean"
        ),
        "aten::smooth_l1_loss": (
            "smooth L1 (Huber-like) loss: quadratic below beta, linear above (box regression)"
        ),
        "aten::smooth_l1_loss_backward": "gradient of the smooth L1 loss",
        "aten::huber_loss": "Huber loss: quadratic below delta, linear above",
        "aten::huber_loss_backward": "gradient of the Huber loss",
        "aten::binary_cross_entropy": (
            "binary cross entropy on probabilities (nn.BCELoss); needs inputs in (0, 1), less "
            "stable than the with-logits form"
        ),
        "aten::binary_cross_entropy_backward": "gradient of binary cross entropy on probabilities",
        "aten::binary_cross_entropy_with_logits": (
            "binary cross entropy on logits (nn.BCEWithLogitsLoss): applies the sigmoid inside in "
            "a numerically stable form, with optional pos_weight; built from elementwise ops"
        ),
        "aten::kl_div": (
            "Kullback-Leibler divergence (nn.KLDivLoss, distillation), elementwise then reduced"
        ),
        "aten::ctc_loss": (
            "connectionist temporal classification loss (speech, OCR), a dynamic program over "
            "alignments"
        ),
        "aten::_ctc_loss": "the CTC loss kernel (cuDNN or native)",
        "aten::margin_ranking_loss": "margin ranking loss, max(0, −y·(x1 − x2) + margin)",
        "aten::cosine_embedding_loss": "cosine embedding loss on pairs of vectors",
        "aten::soft_margin_loss": "logistic soft-margin loss, log(1 + e^(−y·x))",
        "aten::poisson_nll_loss": "Poisson negative log-likelihood loss",
    },
    "pooling": {
        "aten::max_pool1d": "1-D max pooling (nn.MaxPool1d)",
        "aten::max_pool2d": (
            "2-D max pooling (nn.MaxPool2d); when a gradient is needed it calls "
            "max_pool2d_with_indices to keep the argmax positions for the backward, so its total "
            "is that op's"
        ),
        "aten::max_pool2d_with_indices": (
            "2-D max pooling that also returns the position of each window's maximum (saved for "
            "the backward); memory-bound"
        ),
        "aten::max_pool2d_with_indices_backward": (
            "max-pool gradient: routes each output gradient to the input position that held the "
            "maximum (from the saved indices), into a zeroed gradient tensor"
        ),
        "aten::max_pool3d": "3-D max pooling (nn.MaxPool3d)",
        "aten::max_pool3d_with_indices": (
            "3-D max pooling that also returns the argmax positions for the backward"
        ),
        "aten::max_pool3d_with_indices_backward": (
            "3-D max-pool gradient, routed to the saved argmax positions"
        ),
        "aten::mkldnn_max_pool2d": "oneDNN 2-D max pooling on CPU (mkldnn tensors or inference)",
        "aten::avg_pool1d": "1-D average pooling (nn.AvgPool1d)",
        "aten::avg_pool2d": "2-D average pooling (nn.AvgPool2d); memory-bound",
        "aten::avg_pool2d_backward": (
            "average-pool gradient: spreads each output gradient evenly over its window"
        ),
        "aten::avg_pool3d": "3-D average pooling (nn.AvgPool3d)",
        "aten::avg_pool3d_backward": "3-D average-pool gradient",
        "aten::adaptive_avg_pool1d": "1-D adaptive average pooling to a fixed output length",
        "aten::adaptive_avg_pool2d": (
            "nn.AdaptiveAvgPool2d: averages input regions so the output has a fixed size; for a "
            "1x1 output (global average pooling, as at the end of a ResNet) it is computed as "
            "aten::mean, otherwise by aten::_adaptive_avg_pool2d"
        ),
        "aten::_adaptive_avg_pool2d": (
            "the adaptive average-pool kernel for outputs larger than 1x1; memory-bound"
        ),
        "aten::_adaptive_avg_pool2d_backward": (
            "adaptive average-pool gradient: spreads each output gradient over its input region"
        ),
        "aten::adaptive_avg_pool3d": "3-D adaptive average pooling",
        "aten::_adaptive_avg_pool3d": "the 3-D adaptive average-pool kernel",
        "aten::adaptive_max_pool1d": "1-D adaptive max pooling to a fixed output length",
        "aten::adaptive_max_pool2d": (
            "2-D adaptive max pooling to a fixed output size, with argmax indices for the backward"
        ),
        "aten::adaptive_max_pool2d_backward": (
            "adaptive max-pool gradient, routed to the saved argmax positions"
        ),
        "aten::upsample_nearest2d": (
            "nearest-neighbour 2-D upsampling (F.interpolate(mode='nearest'), U-Net/FPN decoders); "
            "memory-bound resampling, the inverse of pooling"
        ),
        "aten::upsample_nearest2d_backward": (
            "gradient of nearest 2-D upsampling: sums the gradients of each source pixel's copies"
        ),
        "aten::_upsample_nearest_exact2d": (
            "nearest-exact 2-D upsampling (pixel-centre aligned), memory-bound"
        ),
        "aten::upsample_bilinear2d": (
            "bilinear 2-D resizing (F.interpolate(mode='bilinear')); memory-bound resampling"
        ),
        "aten::upsample_bilinear2d_backward": "gradient of bilinear 2-D resizing",
        "aten::_upsample_bilinear2d_aa": (
            "antialiased bilinear resizing (torchvision Resize(antialias=True) on tensors)"
        ),
        "aten::upsample_bicubic2d": (
            "bicubic 2-D resizing (F.interpolate(mode='bicubic')); memory-bound resampling"
        ),
        "aten::pixel_shuffle": (
            "rearranges channels into space, [C·r², H, W] -> [C, H·r, W·r] (sub-pixel upsampling)"
        ),
        "aten::grid_sampler_2d": (
            "samples an input at given normalised coordinates (F.grid_sample: spatial "
            "transformers, warping)"
        ),
    },
    "dropout": {
        "aten::dropout": (
            "dropout (nn.Dropout): in training zeroes each element with probability p and scales "
            "the rest by 1/(1−p), in eval returns the input unchanged; on CUDA it calls the fused "
            "aten::native_dropout, on CPU it is composite (empty_like + bernoulli_ for the random "
            "mask, div_, mul)"
        ),
        "aten::native_dropout": (
            "the fused dropout kernel: draws the random mask and applies it in one pass, returning "
            "the output and the mask (kept for the backward)"
        ),
        "aten::native_dropout_backward": "dropout's gradient, grad·mask·1/(1−p)",
        "aten::feature_dropout": (
            "channel dropout (nn.Dropout2d/3d): zeroes whole feature maps, via a per-channel "
            "Bernoulli mask and mul"
        ),
        "aten::alpha_dropout": (
            "alpha dropout (nn.AlphaDropout, for SELU nets), keeping mean and variance"
        ),
        "aten::feature_alpha_dropout": "channel-wise alpha dropout",
        "aten::_fused_dropout": (
            "older (torch <= 1.11) fused CUDA dropout kernel returning output and mask"
        ),
        "aten::_masked_scale": "older dropout backward: grad·mask·scale",
        "aten::fused_dropout": "older name of the fused CUDA dropout kernel",
    },
    "embedding": {
        "aten::embedding": (
            "nn.Embedding lookup: gathers rows of the weight table by index (a reshape, "
            "aten::index_select and a view); memory-bound, its cost grows with the number of "
            "indices times the embedding width"
        ),
        "aten::embedding_backward": (
            "embedding gradient: dispatches to embedding_dense_backward, or to the sparse backward "
            "when the layer has sparse=True"
        ),
        "aten::embedding_dense_backward": (
            "dense embedding gradient: accumulates the output-gradient rows into a zeroed gradient "
            "as large as the whole table; for big vocabularies that full-size gradient (and the "
            "optimizer step over it) is the cost, which nn.Embedding(sparse=True) avoids"
        ),
        "aten::embedding_sparse_backward": (
            "sparse embedding gradient (nn.Embedding(sparse=True)): a sparse tensor holding only "
            "the looked-up rows"
        ),
        "aten::embedding_renorm_": (
            "rescales looked-up embedding rows whose norm exceeds max_norm, in place "
            "(nn.Embedding(max_norm=...))"
        ),
        "aten::embedding_bag": (
            "nn.EmbeddingBag: looks up rows and sums, averages or maxes them per bag (offsets), "
            "without materialising the individual rows"
        ),
        "aten::_embedding_bag": "the embedding-bag kernel: lookup plus per-bag reduction",
        "aten::_embedding_bag_forward_only": (
            "the embedding-bag kernel when no gradient is needed (inference)"
        ),
        "aten::_embedding_bag_backward": (
            "embedding-bag gradient: spreads each bag's gradient back to its rows"
        ),
        "aten::_embedding_bag_dense_backward": "dense embedding-bag gradient over the whole table",
        "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function": (
            "FBGEMM table-batched embedding (TBE) lookup used by TorchRec: pools many embedding "
            "tables in one kernel, and its backward applies the row-wise Adagrad update directly "
            "(fused optimizer), so these tables have no separate optimizer step"
        ),
        "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function_cpu": (
            "FBGEMM table-batched embedding (TBE) lookup with fused row-wise Adagrad, CPU version"
        ),
        "fbgemm::split_embedding_codegen_forward_cpu": (
            "FBGEMM table-batched embedding forward kernel on CPU: lookup and pooling for many "
            "tables at once"
        ),
        "fbgemm::split_embedding_backward_codegen_rowwise_adagrad_cpu": (
            "FBGEMM table-batched embedding backward on CPU with the fused row-wise Adagrad update"
        ),
        "fbgemm::split_embedding_codegen_grad_indice_weights_cpu": (
            "FBGEMM: gradient with respect to per-index weights of a weighted table-batched "
            "embedding, CPU"
        ),
        "fbgemm::permute_pooled_embs_auto_grad": (
            "FBGEMM (TorchRec): reorders pooled embedding outputs from the order of the sharded "
            "lookups into the feature order the model expects, with autograd support"
        ),
        "fbgemm::permute_multi_embedding": (
            "FBGEMM (TorchRec): regroups pooled embeddings of several keyed tensors into new "
            "groups in one kernel"
        ),
        "fbgemm::recat_embedding_grad_output_mixed_D_batch": (
            "FBGEMM (TorchRec): re-concatenates embedding output gradients of tables with "
            "different widths into the layout the all-to-all expects"
        ),
    },
    "attention": {
        "aten::scaled_dot_product_attention": (
            "F.scaled_dot_product_attention: softmax(Q·Kᵀ/√d + mask)·V, choosing a backend "
            "(FlashAttention, memory-efficient, cuDNN, the CPU flash kernel, or the unfused math "
            "path) and calling it, so its self time is the backend choice and its total the "
            "attention"
        ),
        "aten::_scaled_dot_product_flash_attention": (
            "the FlashAttention-2 SDPA backend on CUDA (fp16/bf16): one fused kernel that never "
            "materialises the attention matrix, so memory stays linear in sequence length"
        ),
        "aten::_flash_attention_forward": (
            "the FlashAttention forward kernel: tiled Q·Kᵀ, online softmax and ·V in one pass, "
            "saving the log-sum-exp for the backward"
        ),
        "aten::_flash_attention_backward": (
            "the FlashAttention backward kernel: recomputes attention tiles from Q, K, V and the "
            "saved log-sum-exp to form dQ, dK, dV"
        ),
        "aten::_scaled_dot_product_flash_attention_backward": (
            "SDPA FlashAttention backward: calls the FlashAttention backward kernel for dQ, dK, dV"
        ),
        "aten::_scaled_dot_product_efficient_attention": (
            "the memory-efficient (xFormers-style) SDPA backend: fused attention that also "
            "supports fp32 and arbitrary attention masks"
        ),
        "aten::_efficient_attention_forward": (
            "the memory-efficient attention forward kernel (tiled, online softmax)"
        ),
        "aten::_efficient_attention_backward": "the memory-efficient attention backward kernel",
        "aten::_scaled_dot_product_efficient_attention_backward": (
            "SDPA memory-efficient attention backward"
        ),
        "aten::_scaled_dot_product_cudnn_attention": (
            "the cuDNN fused-attention SDPA backend (Hopper and newer GPUs)"
        ),
        "aten::_scaled_dot_product_cudnn_attention_backward": "the cuDNN fused-attention backward",
        "aten::_scaled_dot_product_flash_attention_for_cpu": (
            "the CPU SDPA kernel (blocked, FlashAttention-style online softmax) used for float and "
            "bf16 inputs on CPU; its self CPU time is the attention's compute"
        ),
        "aten::_scaled_dot_product_flash_attention_for_cpu_backward": (
            "the CPU SDPA backward kernel: dQ, dK, dV recomputed block by block"
        ),
        "aten::_scaled_dot_product_attention_math": (
            "the unfused reference SDPA path: Q·Kᵀ with bmm, softmax, dropout and ·V with bmm, "
            "materialising the full attention matrix, so time and memory grow with sequence length "
            "squared; chosen when no fused kernel supports the inputs"
        ),
        "aten::_scaled_dot_product_attention_math_for_mps": (
            "the unfused SDPA path specialised for Apple MPS"
        ),
        "aten::_native_multi_head_attention": (
            "nn.MultiheadAttention's fused fast path (inference, need_weights=False): "
            "in-projection, attention and out-projection in few kernels"
        ),
        "aten::_transform_bias_rescale_qkv": (
            "adds the in-projection bias to a packed QKV tensor, splits it into heads and scales Q "
            "(MultiheadAttention fast path)"
        ),
        "aten::_transformer_encoder_layer_fwd": (
            "fused inference forward of a whole nn.TransformerEncoderLayer (the BetterTransformer "
            "fast path)"
        ),
        "vllm::unified_attention_with_output": (
            "vLLM's attention layer op: runs the configured attention backend (FlashAttention, "
            "Triton or ROCm kernels over the paged KV cache) for prefill and decode, writing into "
            "a preallocated output"
        ),
        "_C_cache_ops::reshape_and_cache_flash": (
            "vLLM: writes this step's keys and values into the paged KV cache blocks "
            "(FlashAttention layout) at each token's slot"
        ),
        "_C::rotary_embedding": (
            "vLLM's rotary position embedding (RoPE), applied in place to queries and keys"
        ),
        "sgl_kernel::rotary_embedding": (
            "sglang's rotary position embedding (RoPE) kernel, applied to queries and keys"
        ),
        "sglang::store_cache": "sglang: writes new keys and values into the KV cache pool",
    },
    "indexing": {
        "aten::index": (
            "advanced indexing x[idx] with tensor indices, a gather; a boolean mask is first "
            "turned into indices with nonzero, which on GPU copies the count to the host (a sync)"
        ),
        "aten::index_put_": (
            "x[idx] = v with tensor indices, in place; accumulate=True (adding at repeated "
            "indices) is what the backward of indexing uses"
        ),
        "aten::index_put": "out-of-place x[idx] = v with tensor indices (returns a modified copy)",
        "aten::_index_put_impl_": (
            "the kernel of index_put_: writes (or with accumulate adds) values at tensor indices; "
            "with accumulate on CUDA it sorts the indices first, which can dominate"
        ),
        "aten::index_select": (
            "selects whole slices along one dim by an index tensor (the row gather behind "
            "nn.Embedding); memory-bound"
        ),
        "aten::index_add_": (
            "adds rows of a source into x at given indices along a dim, in place (scatter-add of "
            "slices)"
        ),
        "aten::index_add": "out-of-place index_add: adds rows of a source at given indices",
        "aten::index_copy_": (
            "copies rows of a source into x at given indices along a dim, in place"
        ),
        "aten::index_copy": "out-of-place index_copy: copies rows of a source at given indices",
        "aten::index_fill_": "fills the slices at given indices along a dim with a value, in place",
        "aten::gather": (
            "picks values along a dim by an index tensor of the output's shape (e.g. the "
            "log-probability of each target token)"
        ),
        "aten::gather_backward": (
            "gather's gradient: scatter-adds the gradient into zeros at the gathered positions"
        ),
        "aten::scatter": (
            "writes values into a copy of x at positions given by an index tensor along a dim"
        ),
        "aten::scatter_": (
            "writes values into x at positions given by an index tensor along a dim, in place "
            "(e.g. one-hot encoding)"
        ),
        "aten::scatter_add": "out-of-place scatter that adds values at indexed positions",
        "aten::scatter_add_": (
            "adds values into x at positions given by an index tensor, in place (segment sums, "
            "graph message passing)"
        ),
        "aten::scatter_reduce": (
            "scatter with a reduction (sum, prod, mean, amax, amin) at indexed positions"
        ),
        "aten::masked_fill": (
            "returns a copy of x with a value written where a bool mask is True (attention masks)"
        ),
        "aten::masked_fill_": (
            "writes a value into x where a bool mask is True, in place (attention masks, padding)"
        ),
        "aten::masked_select": (
            "the elements where a bool mask is True, as a 1-D tensor; its size depends on the "
            "data, so on GPU the CPU waits for the count (a sync)"
        ),
        "aten::masked_scatter_": (
            "copies consecutive source elements into x where a mask is True, in place"
        ),
        "aten::nonzero": (
            "the indices of non-zero elements (also behind boolean-mask indexing x[mask] and "
            "torch.where(cond)); the output size depends on the data, so on GPU it copies the "
            "count back and synchronises"
        ),
        "aten::nonzero_static": (
            "nonzero with a fixed output size (padded), so it needs no host sync"
        ),
        "aten::argwhere": (
            "indices of non-zero elements, one row each; a data-dependent size, so a sync on GPU"
        ),
        "aten::take": "picks elements of the flattened input at given indices",
        "aten::take_along_dim": (
            "picks values along a dim by indices (like gather, with broadcasting)"
        ),
        "aten::select_backward": (
            "select's gradient: writes the incoming gradient into one slice of a zero tensor of "
            "the input's shape"
        ),
        "aten::slice_backward": (
            "slice's gradient: writes the incoming gradient into the sliced range of a zero tensor "
            "of the input's shape"
        ),
        "aten::select_scatter": (
            "writes a tensor into one index of a dim of a copy of the input (functional form of "
            "x[i] = v)"
        ),
        "aten::slice_scatter": (
            "writes a tensor into a slice of a copy of the input (functional form of x[a:b] = v)"
        ),
        "aten::diagonal_scatter": "writes a tensor onto a diagonal of a copy of the input",
        "aten::bucketize": (
            "for each value, the index of the bucket (given sorted boundaries) it falls into"
        ),
        "aten::searchsorted": "insertion indices of values into a sorted sequence (binary search)",
        "aten::repeat_interleave": (
            "repeats each element (or slice) a given number of times; with a tensor of repeats and "
            "no output_size the size is data-dependent, so on GPU it synchronises"
        ),
        "aten::sort": "sorts along a dim, returning values and indices",
        "aten::argsort": "indices that sort a tensor along a dim",
        "aten::unique": (
            "torch.unique on older versions: distinct values (optionally counts and inverse); a "
            "data-dependent size, so a sync on GPU"
        ),
        "aten::_unique2": (
            "the torch.unique kernel: sorts, finds distinct values, counts and inverse indices; a "
            "data-dependent size, so a sync on GPU"
        ),
        "aten::unique_consecutive": (
            "collapses consecutive equal values; a data-dependent size, so a sync on GPU"
        ),
        "aten::one_hot": (
            "one-hot encoding of class indices (F.one_hot); it checks the maximum index, which on "
            "GPU reads a value back (a sync) unless num_classes is given"
        ),
        "aten::tril": "keeps the lower triangle of a matrix, zeroing the rest (causal masks)",
        "aten::triu": "keeps the upper triangle of a matrix, zeroing the rest (causal masks)",
        "aten::flip": "reverses the order of elements along dims (a copy)",
        "aten::roll": "rolls elements along dims (a copy)",
        "fbgemm::asynchronous_complete_cumsum": (
            "FBGEMM: inclusive prefix sum with a leading zero, turning per-feature lengths into "
            "offsets for jagged (variable-length) sparse features, without a host sync"
        ),
        "fb::asynchronous_complete_cumsum": (
            "Meta-internal counterpart of fbgemm::asynchronous_complete_cumsum: lengths to offsets "
            "for jagged features"
        ),
        "fbgemm::permute_2D_sparse_data": (
            "FBGEMM (TorchRec): reorders the lengths, indices and weights of a keyed jagged tensor "
            "by a feature permutation, to group features per embedding shard"
        ),
        "fbgemm::permute_sparse_features": (
            "FBGEMM (TorchRec): reorders the lengths, indices and weights of sparse features by a "
            "permutation (older form of permute_2D_sparse_data)"
        ),
        "fbgemm::block_bucketize_sparse_features": (
            "FBGEMM (TorchRec): splits sparse feature ids into per-rank buckets for row-wise "
            "sharded embedding tables"
        ),
        "fbgemm::bounds_check_indices": (
            "FBGEMM: checks sparse feature indices against embedding table sizes (warning, "
            "clamping or failing) before a table-batched lookup"
        ),
        "fbgemm::offsets_range": (
            "FBGEMM: for each jagged segment, the range 0..length−1 (positions inside each list)"
        ),
        "fb::offsets_range": "Meta-internal op: for each jagged segment, the range 0..length−1",
    },
    "view": {
        "prims::broadcast_in_dim": (
            "the primitive behind expand and broadcasting: places the input's dims at given "
            "positions of a larger shape, a view with stride 0 on the new dims"
        ),
        "aten::view": (
            "returns a tensor sharing storage with a new shape; no data moves, so its cost is only "
            "dispatch overhead (about a microsecond) and many of them point to Python-level "
            "reshaping in a hot loop"
        ),
        "aten::_unsafe_view": (
            "a view without the usual aliasing checks, used internally (e.g. by matmul and reshape "
            "after a copy); no data moves"
        ),
        "aten::_reshape_alias": (
            "the view that reshape creates for some inputs instead of aten::view; no data moves"
        ),
        "aten::view_as": "view with the shape of another tensor; no data moves",
        "aten::as_strided": (
            "creates a view with explicit sizes, strides and offset: the primitive that most views "
            "(select, slice, transpose, expand, unsqueeze) call, so it is frequent, but each costs "
            "only dispatch overhead"
        ),
        "aten::as_strided_": (
            "resets a tensor's sizes, strides and offset in place without moving data (used by ops "
            "that resize their outputs)"
        ),
        "aten::reshape": (
            "a view when the strides allow it, otherwise a copy (clone + _unsafe_view); a reshape "
            "with aten::clone or copy_ under it is moving data, usually because the input was "
            "transposed or permuted"
        ),
        "aten::flatten": (
            "flattens a range of dims into one (torch.flatten / nn.Flatten) via reshape, so a view "
            "unless the input is non-contiguous"
        ),
        "aten::unflatten": "splits one dim into several (a view)",
        "aten::select": (
            "indexes one position along a dim, x[i], a view with that dim removed; per-sample "
            "indexing (e.g. a TensorDataset's __getitem__ inside the DataLoader) and Python loops "
            "call it very often, each call costing only dispatch overhead"
        ),
        "aten::slice": "x[a:b:step] along one dim, a view",
        "aten::narrow": (
            "x.narrow(dim, start, length), a contiguous range along one dim (a view via slice); "
            "split and chunk produce their pieces with it"
        ),
        "aten::transpose": (
            "swaps two dims by swapping their strides, a view; a later op that needs contiguous "
            "memory pays the copy"
        ),
        "aten::transpose_": "swaps two dims in place (stride change only)",
        "aten::t": (
            "transposes a 2-D tensor (e.g. a Linear weight before addmm), a view via transpose"
        ),
        "aten::numpy_T": "Tensor.T: reverses all dims, a view",
        "aten::permute": (
            "reorders all dims by permuting strides, a view; the op that later needs contiguous "
            "data pays the copy"
        ),
        "aten::movedim": "moves dims to new positions, a view via permute",
        "aten::swapaxes": "swaps two dims, a view (alias of transpose)",
        "aten::expand": (
            "broadcasts size-1 dims to a larger shape by giving them stride 0, a view with no copy"
        ),
        "aten::expand_as": "expand to another tensor's shape, a view with no copy",
        "aten::broadcast_tensors": (
            "expands several tensors to a common broadcast shape, views with no copy"
        ),
        "aten::broadcast_to": "expands a tensor to a broadcast shape, a view with no copy",
        "aten::unsqueeze": "inserts a size-1 dim, a view",
        "aten::unsqueeze_": "inserts a size-1 dim in place (metadata only)",
        "aten::squeeze": "removes size-1 dims, a view",
        "aten::squeeze_": "removes size-1 dims in place (metadata only)",
        "aten::split": (
            "splits a tensor into equal chunks along a dim; the pieces are views made with narrow"
        ),
        "aten::split_with_sizes": (
            "splits a tensor into pieces of given sizes along a dim; the pieces are views (e.g. "
            "separating Q, K and V of a fused projection)"
        ),
        "aten::chunk": "splits into a number of nearly equal chunks along a dim, views via split",
        "aten::tensor_split": "splits by number of sections or by indices, views",
        "aten::unbind": (
            "removes a dim, returning one view per position (e.g. iterating over a batch)"
        ),
        "aten::unfold": (
            "sliding windows of a given size and step along a dim, a view (Tensor.unfold, not "
            "nn.Unfold)"
        ),
        "aten::diagonal": (
            "a view of a diagonal of a matrix (or of two dims of a tensor); no data moves"
        ),
        "aten::alias": "another tensor object sharing the same storage and metadata",
        "aten::detach": (
            "returns a view sharing data but cut off from the autograd graph (.detach(), and "
            "AccumulateGrad when it stores a new .grad); the row named detach under it is the same "
            "call one dispatch level down"
        ),
        "aten::detach_": (
            "detaches a tensor from the autograd graph in place (.detach_()); metadata only"
        ),
        "detach": (
            "the inner dispatch level (autograd view tracking) of aten::detach, recorded as a "
            "separate row; same call, no data moves"
        ),
        "detach_": (
            "the inner dispatch level of aten::detach_, recorded as a separate row; metadata only"
        ),
        "aten::resolve_conj": (
            "materialises a tensor whose lazy conjugate bit is set; for real tensors it returns "
            "the input, so the resolve_conj rows under mm/addmm cost only dispatch"
        ),
        "aten::resolve_neg": (
            "materialises a tensor whose lazy negative bit is set; otherwise it returns the input, "
            "costing only dispatch"
        ),
        "aten::conj": (
            "complex conjugate, applied lazily (sets a bit); for real tensors it returns the input"
        ),
        "aten::_conj": "lazy complex conjugate (sets the conjugate bit)",
        "aten::view_as_real": (
            "views a complex tensor as real with a trailing dim of 2 (rotary embeddings written "
            "with complex numbers)"
        ),
        "aten::view_as_complex": "views a real tensor with a trailing dim of 2 as complex",
        "aten::set_": (
            "points a tensor at another storage (with given size, stride and offset) without "
            "copying; tensors received from DataLoader worker processes are rebuilt this way "
            "(torch._utils._rebuild_tensor), as are tensors loaded by torch.load"
        ),
        "aten::unflatten_dense_tensors": (
            "splits a flat buffer back into views shaped like a list of tensors (DDP/apex gradient "
            "buckets)"
        ),
        "aten::_nested_tensor_from_mask": (
            "builds a nested (ragged) tensor from a padded batch and a mask (transformer fast path)"
        ),
    },
    "copy": {
        "prims::convert_element_type": (
            "the primitive dtype conversion (what .to(dtype) decomposes to), an elementwise cast"
        ),
        "aten::copy_": (
            "copies src into an existing tensor, converting dtype and layout as needed; when the "
            "two are on different devices it is a host-to-device or device-to-host transfer (a "
            "cudaMemcpyAsync), which blocks the CPU for device-to-host copies into pageable "
            "memory; for CPU tensors its self time is the copy itself"
        ),
        "aten::_copy_from": (
            "the cross-device half of copy_ used by some backends (older CUDA builds, MPS, XLA): "
            "where the transfer between devices happens"
        ),
        "aten::_copy_from_and_resize": (
            "cross-device copy that also resizes the destination (MPS, XLA)"
        ),
        "aten::to": (
            "Tensor.to(device, dtype): returns the tensor itself when nothing changes (a row "
            "without children cost only dispatch), otherwise calls aten::_to_copy; a "
            "host-to-device or device-to-host copy when the devices differ"
        ),
        "aten::_to_copy": (
            "the real work of .to(), .cuda(), .cpu(), .float(), .half(): allocates the destination "
            "(empty_strided) and copy_s into it; a transfer when the devices differ, a dtype "
            "conversion otherwise"
        ),
        "aten::_to_cpu": "copies a list of tensors to the CPU in one call",
        "aten::type_as": "casts to another tensor's dtype via to, a no-op if it already matches",
        "aten::clone": (
            "allocates a tensor of the same shape and copies into it (empty_like/empty_strided + "
            "copy_)"
        ),
        "aten::contiguous": (
            "returns the tensor itself if already contiguous, else clones it in the requested "
            "memory format; a contiguous with a clone child is a real copy, often caused by a "
            "transpose or permute before a view"
        ),
        "aten::cat": (
            "concatenates tensors along a dim into a new tensor, copying all inputs once (skip "
            "connections in U-Nets, DenseNet, collating)"
        ),
        "aten::_cat": "the concatenation kernel of aten::cat in older torch",
        "aten::stack": (
            "stacks tensors along a new dim (unsqueeze each, then cat); the DataLoader's default "
            "collate builds every batch this way"
        ),
        "aten::hstack": "concatenates tensors horizontally (cat along dim 1, or 0 for 1-D)",
        "aten::vstack": "concatenates tensors vertically (cat along dim 0 after making them 2-D)",
        "aten::repeat": "tiles a tensor along dims, a real copy (unlike expand)",
        "aten::tile": "tiles a tensor along dims, a real copy, via repeat",
        "aten::pad": (
            "F.pad: pads a tensor (constant, reflect, replicate or circular), allocating a larger "
            "tensor"
        ),
        "aten::constant_pad_nd": (
            "constant padding: allocates the larger tensor, fills it with the value and copies the "
            "input into its interior"
        ),
        "aten::reflection_pad2d": "reflect padding of a 2-D image (a copy)",
        "aten::replication_pad2d": "replicate padding of a 2-D image (a copy)",
        "aten::pin_memory": (
            "copies a CPU tensor into page-locked (pinned) memory, so later host-to-device copies "
            "can run asynchronously; DataLoader(pin_memory=True) does this in its pin-memory "
            "thread"
        ),
        "aten::_pin_memory": (
            "the pinned-memory copy behind pin_memory: allocates page-locked host memory (through "
            "the pinned caching allocator) and copies into it"
        ),
        "aten::flatten_dense_tensors": (
            "concatenates many tensors into one flat buffer so that one collective can carry them "
            "all (DDP/apex buckets)"
        ),
        "aten::_foreach_copy_": (
            "copies each tensor of a list into the matching tensor of another list in one call "
            "(multi-tensor kernels on GPU)"
        ),
        "aten::_to_dense": "converts a sparse (or mkldnn) tensor to a dense one",
        "aten::to_dense": "converts a sparse (or mkldnn) tensor to a dense one",
        "aten::to_mkldnn": "converts a dense CPU tensor to oneDNN's blocked layout",
        "fbgemm::FloatToFP8RowwiseQuantized": (
            "FBGEMM: quantises a float tensor to FP8 per row, with a scale per row (compressed "
            "communication)"
        ),
        "fbgemm::FP8RowwiseQuantizedToFloat": "FBGEMM: dequantises row-wise FP8 back to float",
        "fbgemm::FloatToHFP8Quantized": "FBGEMM: quantises a float tensor to hybrid FP8 (HFP8)",
        "fbgemm::HFP8QuantizedToFloat": "FBGEMM: dequantises hybrid FP8 (HFP8) back to float",
        "_C::static_scaled_fp8_quant": (
            "vLLM: quantises activations to FP8 with a precomputed (static) scale before an FP8 "
            "GEMM"
        ),
    },
    "allocation": {
        "aten::empty": (
            "allocates an uninitialised tensor; on GPU it comes from PyTorch's caching allocator "
            "(no cudaMalloc unless the cache must grow), so it costs microseconds, and the empty "
            "rows under an op are its outputs and workspaces"
        ),
        "aten::empty_strided": (
            "allocates an uninitialised tensor with given sizes and strides (the destination of "
            "to, clone and many kernels); from the caching allocator on GPU, microseconds"
        ),
        "aten::empty_like": (
            "allocates an uninitialised tensor shaped like another (output buffers); cheap, from "
            "the caching allocator on GPU"
        ),
        "aten::empty_permuted": (
            "allocates an uninitialised tensor with a given dim order in memory (e.g. "
            "channels-last outputs)"
        ),
        "aten::new_empty": "allocates an uninitialised tensor with the dtype and device of another",
        "aten::new_empty_strided": (
            "allocates an uninitialised tensor with given strides and the dtype and device of "
            "another"
        ),
        "aten::zeros": (
            "torch.zeros: allocates (aten::empty) and fills with zero (aten::zero_), so its time "
            "is the allocation plus a memset-like pass"
        ),
        "aten::zeros_like": (
            "allocates a tensor shaped like another and fills it with zero (empty_like + zero_)"
        ),
        "aten::new_zeros": "allocates a zero-filled tensor with the dtype and device of another",
        "aten::ones": "torch.ones: allocates and fills with one",
        "aten::ones_like": (
            "allocates a tensor shaped like another filled with one (e.g. the implicit gradient of "
            "a scalar loss in backward())"
        ),
        "aten::new_ones": "allocates a one-filled tensor with the dtype and device of another",
        "aten::full": "torch.full: allocates and fills with a value",
        "aten::full_like": "allocates a tensor shaped like another filled with a value",
        "aten::new_full": (
            "allocates a tensor filled with a value, with the dtype and device of another"
        ),
        "aten::scalar_tensor": (
            "makes a 0-dim tensor from a Python number (e.g. when a scalar must become a tensor "
            "for where or a fused op)"
        ),
        "aten::arange": (
            "allocates a 1-D tensor of evenly spaced values (position ids, index ranges)"
        ),
        "aten::linspace": "allocates a 1-D tensor of evenly spaced values between two ends",
        "aten::eye": "allocates an identity matrix",
        "aten::resize_": (
            "changes a tensor's size in place, allocating new storage only if it must grow; most "
            "rows are output tensors being sized by kernels, cheap unless storage grows"
        ),
        "aten::resize_as_": (
            "resizes a tensor in place to another's shape, allocating only if it must grow"
        ),
        "aten::record_stream": (
            "tells the caching allocator that a tensor is also used on another stream, so its "
            "memory is not reused until that stream's queued work is done (checked with CUDA "
            "events); used by collectives, side-stream copies and FSDP; cheap on the CPU but "
            "delays memory reuse"
        ),
        "aten::_empty_affine_quantized": (
            "allocates an uninitialised quantised tensor (scale and zero point)"
        ),
        "prims::iota": "the primitive behind arange: a 1-D tensor of start + step·i",
        "cudaMalloc": (
            "allocates device memory from the driver; PyTorch's caching allocator calls it only "
            "when its cache cannot serve a request, and it can take milliseconds and synchronise "
            "implicitly, so frequent cudaMalloc/cudaFree during steps means the cache is thrashing "
            "(memory pressure or fragmentation; see torch.cuda.memory_stats and "
            "expandable_segments)"
        ),
        "cudaFree": (
            "returns device memory to the driver and implicitly synchronises the device; PyTorch "
            "frees cached blocks only in torch.cuda.empty_cache() or after an allocation failed, "
            "so seeing it during steps means memory pressure"
        ),
        "cudaMallocAsync": (
            "stream-ordered device allocation (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync); "
            "cheaper than cudaMalloc and served from the driver's pool"
        ),
        "cudaFreeAsync": (
            "stream-ordered free of device memory (cudaMallocAsync backend); returns the block to "
            "the driver's pool when the stream reaches it"
        ),
        "cudaHostAlloc": (
            "allocates page-locked (pinned) host memory, used by pin_memory and the pinned-memory "
            "caching allocator; slow because the pages are locked and mapped for the GPU, so it "
            "should happen only while that cache warms up"
        ),
        "cudaMallocHost": (
            "allocates page-locked (pinned) host memory; slow, cached by PyTorch's pinned-memory "
            "allocator"
        ),
        "cudaFreeHost": (
            "frees page-locked (pinned) host memory; slow, and it synchronises the device"
        ),
        "cudaHostRegister": (
            "page-locks an existing host allocation so the GPU can copy from it asynchronously; "
            "slow"
        ),
        "cudaHostUnregister": "unlocks host memory registered with cudaHostRegister",
        "cuMemAlloc": "CUDA driver API: allocates device memory (slow, like cudaMalloc)",
        "cuMemFree": "CUDA driver API: frees device memory (synchronises, like cudaFree)",
        "cuMemCreate": (
            "CUDA driver API: creates physical device memory for the virtual memory API "
            "(expandable_segments grows segments this way)"
        ),
        "cuMemMap": (
            "CUDA driver API: maps physical memory into a reserved virtual range "
            "(expandable_segments)"
        ),
        "cuMemAddressReserve": (
            "CUDA driver API: reserves a virtual address range for later mapping "
            "(expandable_segments)"
        ),
        "cuMemSetAccess": (
            "CUDA driver API: grants a device access to mapped memory (expandable_segments)"
        ),
        "cuMemUnmap": (
            "CUDA driver API: unmaps physical memory from a virtual range (expandable_segments "
            "shrinking)"
        ),
        "cuMemRelease": "CUDA driver API: releases physical memory of the virtual memory API",
        "hipHostMalloc": (
            "allocates page-locked (pinned) host memory on ROCm; slow, cached by PyTorch's "
            "pinned-memory allocator"
        ),
        "hipHostFree": "frees page-locked (pinned) host memory on ROCm",
        "urUSMDeviceAlloc": (
            "Intel XPU: allocates device memory (USM); PyTorch's XPU caching allocator calls it "
            "only when its cache cannot serve a request"
        ),
        "urUSMHostAlloc": "Intel XPU: allocates pinned host memory (USM)",
        "urUSMSharedAlloc": "Intel XPU: allocates shared (migratable) USM memory",
        "urUSMFree": "Intel XPU: frees USM memory",
    },
    "random": {
        "aten::rand": "allocates a tensor of uniform [0, 1) random numbers",
        "aten::randn": "allocates a tensor of standard normal random numbers",
        "aten::randint": "allocates a tensor of random integers in [low, high)",
        "aten::randperm": (
            "a random permutation of 0..n−1; RandomSampler (DataLoader shuffle=True) calls it once "
            "per epoch"
        ),
        "aten::rand_like": "uniform random numbers shaped like another tensor",
        "aten::randn_like": "normal random numbers shaped like another tensor",
        "aten::randint_like": "random integers shaped like another tensor",
        "aten::uniform_": (
            "fills a tensor in place with uniform random numbers; behind torch.rand and nn.init "
            "(kaiming_uniform_ in every Linear/Conv reset_parameters), so many of them mean model "
            "construction is inside the profiled range"
        ),
        "aten::normal_": (
            "fills a tensor in place with normal random numbers (torch.randn, "
            "nn.init.normal_/trunc_normal_)"
        ),
        "aten::bernoulli_": (
            "fills a tensor in place with 0/1 samples of probability p: the random mask of dropout "
            "on CPU"
        ),
        "aten::bernoulli": "samples 0/1 values with given probabilities",
        "aten::random_": (
            "fills a tensor in place with random integers: the work behind torch.randint, "
            "including the seeds that torch.compile-generated kernels draw for their random "
            "numbers, and the base seed every DataLoader iterator draws"
        ),
        "aten::exponential_": (
            "fills a tensor in place with exponential random numbers (Gumbel-style sampling)"
        ),
        "aten::multinomial": (
            "samples indices from given probabilities (token sampling, weighted sampling)"
        ),
        "aten::geometric_": "fills a tensor in place with geometric random numbers",
        "aten::cauchy_": "fills a tensor in place with Cauchy random numbers",
        "aten::log_normal_": "fills a tensor in place with log-normal random numbers",
    },
    "optimizer": {
        "aten::_fused_adam_": (
            "the whole Adam step for every parameter in a few fused multi-tensor kernels "
            "(Adam(fused=True)); one row replaces the thousands of per-parameter ops of the "
            "for-loop implementation"
        ),
        "aten::_fused_adamw_": (
            "the whole AdamW step for every parameter in a few fused multi-tensor kernels "
            "(AdamW(fused=True)); one row replaces the thousands of per-parameter ops of the "
            "for-loop implementation (on CPU, its aten::item children read each parameter's step "
            "count)"
        ),
        "aten::_fused_sgd_": (
            "the whole SGD (momentum) step for every parameter in fused multi-tensor kernels "
            "(SGD(fused=True))"
        ),
        "aten::_fused_adagrad_": (
            "the whole Adagrad step for every parameter in fused multi-tensor kernels "
            "(Adagrad(fused=True))"
        ),
        "aten::addcdiv_": (
            "in place a += value·b/c; in Adam/AdamW's step this applies the update param −= "
            "lr·m̂/(√v̂ + eps), once per parameter in the for-loop implementation"
        ),
        "aten::addcmul_": (
            "in place a += value·b·c; in Adam/AdamW's step this updates the second moment v = β2·v "
            "+ (1−β2)·g², once per parameter in the for-loop implementation"
        ),
        "aten::lerp_": (
            "in place a += weight·(b − a); in Adam/AdamW's step this updates the first moment m "
            "toward the gradient, once per parameter in the for-loop implementation"
        ),
        "aten::_amp_foreach_non_finite_check_and_unscale_": (
            "GradScaler.unscale_ (mixed precision): divides every gradient by the loss scale and "
            "flags any inf/NaN, in multi-tensor kernels"
        ),
        "aten::_amp_update_scale_": (
            "GradScaler.update: grows or backs off the loss scale depending on whether inf/NaN "
            "gradients were found"
        ),
        "aten::_foreach_norm": (
            "the norm of every tensor of a list in one call: clip_grad_norm_ (foreach) computes "
            "all gradient norms with it"
        ),
        "aten::_foreach_zero_": (
            "zeroes every tensor of a list in one call (zero_grad(set_to_none=False) with foreach)"
        ),
    },
    "communication": {
        "record_param_comms": (
            "the profiler record around a c10d collective or point-to-point op, carrying its "
            "parameters (collective name, message sizes, dtype, process group, ranks) in its args; "
            "its CPU time is the enqueue for NCCL (the transfer is the nccl kernel on the GPU) or "
            "the whole blocking transfer for Gloo"
        ),
        "torch::distributed::reducer::mul_out": (
            "DDP's reducer copying a parameter's gradient into its slot of the communication "
            "bucket while dividing it by the world size (so the bucket's all-reduce sum becomes a "
            "mean)"
        ),
        "torch.distributed.ddp.reducer::copy_bucket_to_grad": (
            "DDP's reducer copying an averaged gradient from the flat bucket back into param.grad "
            "after the bucket's all-reduce (skipped with gradient_as_bucket_view=True)"
        ),
        "vllm::all_reduce": (
            "vLLM's tensor-parallel all-reduce (custom all-reduce kernel, NCCL or symmetric "
            "memory), summing the partial outputs of row-parallel layers across GPUs"
        ),
        "vllm::all_gather": (
            "vLLM's tensor-parallel all-gather, concatenating each GPU's shard (e.g. of the logits)"
        ),
        "symm_mem::multimem_all_reduce_": (
            "all-reduce over symmetric memory using NVLink SHARP multimem instructions "
            "(torch.distributed._symmetric_memory), for small latency-bound messages"
        ),
        "All2All_Pooled_Req": (
            "TorchRec: starts the all-to-all that sends each rank's pooled embeddings to the ranks "
            "that own the features (model-parallel embeddings); the matching All2All_Pooled_Wait "
            "row waits for it"
        ),
        "All2All_Pooled_Wait": (
            "TorchRec: waits for the pooled-embedding all-to-all started by All2All_Pooled_Req; "
            "its time is communication not hidden behind compute"
        ),
        "ReduceScatterBase_Req": (
            "TorchRec: starts a reduce-scatter of pooled embeddings across ranks (the matching "
            "ReduceScatterBase_Wait waits for it)"
        ),
        "ReduceScatterBase_Wait": (
            "TorchRec: waits for the reduce-scatter started by ReduceScatterBase_Req; its time is "
            "communication not hidden behind compute"
        ),
        "CommOpGradientScaling": (
            "TorchRec: scales gradients flowing through a communication op by a constant (e.g. "
            "1/world size) in its backward"
        ),
    },
    "autograd": {
        "torch::autograd::AccumulateGrad": (
            "the autograd leaf node that stores a parameter's gradient in .grad: it takes over "
            "(aten::detach) the incoming gradient when .grad is None, otherwise adds it in place "
            "(aten::add_); one per parameter per backward, so models with many small parameters "
            "show many of them"
        ),
        "torch::autograd::GraphRoot": (
            "the node that starts a backward pass by feeding in the initial gradient (ones for a "
            "scalar loss)"
        ),
        "torch::autograd::CopyBackwards": (
            "backward of an in-place copy_ into a tensor: passes the gradient on to the copy's "
            "source"
        ),
        "torch::autograd::CopySlices": (
            "backward wrapper for an in-place op on a view: applies the op's backward to the "
            "viewed slice of the base tensor's gradient"
        ),
        "torch::autograd::Error": (
            "an autograd node that raises when reached (an op whose backward is not implemented)"
        ),
        "torch::autograd::DelayedError": (
            "an autograd node that raises when reached (a gradient through an op that does not "
            "support it)"
        ),
        "torch::jit::(anonymous namespace)::DifferentiableGraphBackward": (
            "backward of a TorchScript differentiable subgraph (scripted or traced model with "
            "autodiff): runs the graph's generated backward as one node, so its total is that "
            "backward and its children are the ops it executes"
        ),
        "<backward op>": (
            "TorchScript's graph executor running the backward graph of a differentiable subgraph "
            "(the DifferentiableGraphBackward node's body)"
        ),
        "CompiledFunctionBackward": (
            "backward of a torch.compile'd region: runs the AOTAutograd-compiled backward graph "
            "(Inductor kernels) as one autograd node"
        ),
        "PreBackwardFunctionBackward": (
            "DeepSpeed ZeRO-3: backward of the PreBackwardFunction hook on a module's outputs, run "
            "just before the module's own backward; it gathers (or waits for the prefetch of) the "
            "module's partitioned parameters, so its time is parameter communication, not compute"
        ),
        "PostBackwardFunctionBackward": (
            "DeepSpeed ZeRO-3: backward of the PostBackwardFunction hook on a module's inputs, run "
            "just after the module's backward; it releases the gathered parameters back to their "
            "partitions"
        ),
        "CompiledFunction": (
            "forward of a torch.compile'd region as an autograd.Function: runs the "
            "AOTAutograd-compiled forward graph and saves what its backward "
            "(CompiledFunctionBackward) needs"
        ),
    },
    "runtime": {
        "cudaLaunchKernel": (
            "enqueues one kernel on a CUDA stream and returns without waiting; its CPU time "
            "(typically 3-10 µs) is pure launch overhead, so many of them around short kernels "
            "mean the step is launch-bound (CUDA graphs or torch.compile reduce them)"
        ),
        "cudaLaunchKernelExC": (
            "extended CUDA kernel launch with launch attributes (thread-block clusters, "
            "programmatic dependent launch), used by newer cuBLAS/CUTLASS and Triton kernels; "
            "enqueue only, like cudaLaunchKernel"
        ),
        "cudaLaunchCooperativeKernel": (
            "launches a cooperative kernel whose blocks may synchronise grid-wide; enqueue only"
        ),
        "cuLaunchKernel": (
            "CUDA driver-API kernel launch, used for kernels loaded as modules at run time (Triton "
            "and torch.compile/Inductor kernels, NVRTC-jitted ops); enqueue only, launch overhead "
            "like cudaLaunchKernel"
        ),
        "cuLaunchKernelEx": (
            "extended driver-API kernel launch with launch attributes (clusters, programmatic "
            "dependent launch), used by Triton on Hopper and newer; enqueue only"
        ),
        "cudaGraphLaunch": (
            "replays a captured CUDA graph: one host call enqueues all its kernels, replacing many "
            "cudaLaunchKernel calls (torch.cuda.graphs, torch.compile(mode='reduce-overhead'), "
            "vLLM/sglang decoding)"
        ),
        "cudaEventRecord": (
            "enqueues an event marker on a stream (for timing, cross-stream dependencies, or the "
            "caching allocator's bookkeeping for record_stream); returns without waiting"
        ),
        "cudaEventRecordWithFlags": (
            "enqueues an event marker on a stream with flags (e.g. for graph capture); returns "
            "without waiting"
        ),
        "cudaEventQuery": (
            "non-blocking check whether an event has completed; the caching allocator polls it to "
            "reuse memory freed on other streams and NCCL's watchdog to watch collectives, so "
            "thousands of them are normal and each is cheap"
        ),
        "cudaEventCreate": "creates a CUDA event (usually pooled and reused by PyTorch)",
        "cudaEventCreateWithFlags": (
            "creates a CUDA event with flags (e.g. timing disabled, interprocess); PyTorch pools "
            "events, so these should be rare after warm-up"
        ),
        "cudaEventDestroy": "destroys a CUDA event; host-only",
        "cudaEventElapsedTime": (
            "reads the GPU time between two completed events (torch.cuda.Event.elapsed_time); it "
            "needs both events done, so it is usually preceded by a synchronisation"
        ),
        "cudaFuncGetAttributes": (
            "queries a kernel's attributes (registers, shared memory, maximum threads per block) "
            "to size its launch; host-only and cheap, normally cached after the first call"
        ),
        "cudaFuncSetAttribute": (
            "sets a kernel attribute, such as the dynamic shared memory limit, before launching it "
            "(FlashAttention, CUTLASS and cuBLASLt kernels do this); host-only"
        ),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor": (
            "asks how many blocks of a kernel fit on one SM, to size a grid (PyTorch's reductions, "
            "cuDNN and cuBLAS use it); host-only, no device work"
        ),
        "cudaPeekAtLastError": (
            "reads the last launch error without clearing it; PyTorch checks after every kernel "
            "launch (C10_CUDA_KERNEL_LAUNCH_CHECK), so one per launch is normal and free"
        ),
        "cudaGetLastError": (
            "reads and clears the last CUDA error; a host-only check after launches"
        ),
        "cudaStreamIsCapturing": (
            "asks whether a stream is being captured into a CUDA graph; PyTorch checks it before "
            "operations that must behave differently during capture; host-only and cheap"
        ),
        "cudaStreamGetCaptureInfo": (
            "queries whether a stream is being captured into a CUDA graph, and which capture; "
            "host-only and cheap"
        ),
        "cudaStreamGetCaptureInfo_v2": (
            "queries a stream's graph-capture status and capture dependencies; host-only and cheap"
        ),
        "cudaThreadExchangeStreamCaptureMode": (
            "switches the thread's stream-capture mode around operations that are unsafe during "
            "graph capture; host-only"
        ),
        "cudaStreamBeginCapture": (
            "starts capturing a stream's work into a CUDA graph instead of running it"
        ),
        "cudaStreamEndCapture": "ends a stream capture and returns the captured CUDA graph",
        "cudaGraphInstantiate": (
            "turns a captured CUDA graph into an executable one (once per captured graph; slow, "
            "warm-up only)"
        ),
        "cudaGraphInstantiateWithFlags": (
            "turns a captured CUDA graph into an executable one, with flags (once per captured "
            "graph; slow, warm-up only)"
        ),
        "cudaGraphDestroy": "destroys a CUDA graph; host-only",
        "cudaGraphExecDestroy": "destroys an executable CUDA graph",
        "cudaStreamCreate": "creates a CUDA stream (PyTorch pools streams, so this should be rare)",
        "cudaStreamCreateWithFlags": (
            "creates a CUDA stream with flags (e.g. non-blocking); PyTorch creates its stream "
            "pools lazily, so these appear on first use"
        ),
        "cudaStreamCreateWithPriority": (
            "creates a CUDA stream with a priority (PyTorch's high-priority stream pool, NCCL "
            "streams)"
        ),
        "cudaStreamDestroy": "destroys a CUDA stream; host-only",
        "cudaStreamQuery": (
            "non-blocking check whether all work on a stream has completed "
            "(torch.cuda.Stream.query)"
        ),
        "cudaStreamGetPriority": "reads a stream's priority; host-only and cheap",
        "cudaStreamGetDevice": "reads which device a stream belongs to; host-only and cheap",
        "cudaDeviceGetStreamPriorityRange": (
            "queries the allowed stream priorities (PyTorch asks when creating streams); host-only "
            "and cheap"
        ),
        "cudaDeviceGetAttribute": (
            "reads one device attribute (SM count, shared memory per block, ...); host-only and "
            "cheap"
        ),
        "cudaGetDeviceProperties": (
            "reads all properties of a device; slow compared with a single attribute, so PyTorch "
            "caches the result"
        ),
        "cudaGetDeviceCount": "asks how many GPUs are visible; host-only",
        "cudaGetDevice": "asks which device is current for the calling thread; host-only and cheap",
        "cudaSetDevice": (
            "makes a device current for the calling thread (a device guard switching GPUs); cheap "
            "unless it creates the context"
        ),
        "cudaDriverGetVersion": "asks the installed driver's CUDA version; host-only",
        "cudaRuntimeGetVersion": "asks the CUDA runtime's version; host-only",
        "cudaPointerGetAttributes": (
            "asks which device and memory type a pointer belongs to (e.g. whether host memory is "
            "pinned, for copies and is_pinned); host-only"
        ),
        "cudaMemGetInfo": (
            "queries free and total device memory (torch.cuda.mem_get_info, allocator decisions); "
            "host-side driver query"
        ),
        "cudaGetSymbolAddress": (
            "looks up the device address of a global symbol in a loaded module; host-only"
        ),
        "cudaGetFuncBySymbol": "looks up a kernel's driver handle from its host symbol; host-only",
        "cudaHostGetDevicePointer": (
            "gets the device address of mapped pinned host memory; host-only"
        ),
        "cudaDeviceCanAccessPeer": (
            "asks whether one GPU can directly read another's memory (P2P), e.g. before enabling "
            "peer access"
        ),
        "cudaDeviceEnablePeerAccess": "enables direct access to another GPU's memory (P2P copies)",
        "cudaIpcGetMemHandle": (
            "exports a device allocation for use by another process (CUDA IPC: DataLoader workers "
            "sharing CUDA tensors, torch.multiprocessing)"
        ),
        "cudaIpcOpenMemHandle": "maps a device allocation exported by another process (CUDA IPC)",
        "cuModuleLoadData": (
            "loads a compiled GPU module (cubin or PTX) into the context: Triton/Inductor kernels "
            "and NVRTC-jitted ops on first use; slow (milliseconds), so it should appear only "
            "during warm-up"
        ),
        "cuModuleLoadDataEx": "loads a compiled GPU module with JIT options; slow, warm-up only",
        "cuModuleGetFunction": (
            "looks up a kernel in a loaded module (on first use of a Triton/Inductor kernel)"
        ),
        "cuModuleUnload": "unloads a GPU module (compiled kernels) from the context",
        "cuFuncSetAttribute": (
            "sets an attribute (e.g. the shared memory limit) of a kernel loaded through the "
            "driver API, before launching it"
        ),
        "cuFuncGetAttribute": "reads an attribute of a kernel loaded through the driver API",
        "cuCtxGetCurrent": "asks for the calling thread's CUDA context; host-only and cheap",
        "cuCtxSetCurrent": "makes a CUDA context current for the calling thread",
        "cuDevicePrimaryCtxRetain": (
            "creates or retains the device's primary context (first CUDA use of a device: slow, "
            "once)"
        ),
        "cuInit": "initialises the CUDA driver (once per process, slow)",
        "cuGetProcAddress": (
            "looks up a driver API entry point (lazy binding by the runtime); host-only"
        ),
        "hipLaunchKernel": (
            "enqueues one kernel on a HIP stream (ROCm) and returns without waiting; its CPU time "
            "is pure launch overhead, so many of them around short kernels mean the step is "
            "launch-bound"
        ),
        "hipExtModuleLaunchKernel": (
            "HIP extended module launch (optionally recording start/stop events), used by rocBLAS, "
            "hipBLASLt and other ROCm libraries to launch their precompiled kernels; enqueue only"
        ),
        "hipModuleLaunchKernel": (
            "HIP launch of a kernel from a loaded code object (Triton, aiter, hipBLASLt, FlyDSL "
            "kernels); enqueue only"
        ),
        "hipGetDevicePropertiesR0600": (
            "hipGetDeviceProperties (R0600 is the ROCm 6 ABI suffix): reads all properties of a "
            "device; slow compared with a single attribute, so thousands of calls mean some code "
            "re-queries them per op instead of caching"
        ),
        "hipModuleLoadData": (
            "loads a compiled GPU code object into the context (Triton and other JIT kernels on "
            "first use); slow, warm-up only"
        ),
        "hipStreamGetDevice": "reads which device a HIP stream belongs to; host-only and cheap",
        "hipPointerGetAttribute": (
            "reads one attribute (memory type, device) of a pointer; host-only"
        ),
        "hipPointerGetAttributes": (
            "asks which device and memory type a pointer belongs to; host-only"
        ),
        "runFunction - job_prep_and_submit_for_execution": (
            "MTIA runtime: prepares a compiled job and submits it to the accelerator, MTIA's "
            "counterpart of a kernel launch; enqueue overhead on the CPU"
        ),
        "recordEvent": (
            "MTIA runtime: records an event on a stream (a marker for timing and dependencies); "
            "returns without waiting"
        ),
        "INVALID": (
            "a CUDA runtime call whose callback id (args.cbid) the tracing library could not name, "
            "typically an API newer than that Kineto build; host time only"
        ),
        "urEnqueueKernelLaunch": (
            "Intel XPU (Level Zero Unified Runtime) kernel launch: enqueues a SYCL kernel and "
            "returns without waiting, the XPU counterpart of cudaLaunchKernel"
        ),
        "urEnqueueKernelLaunchCustomExp": (
            "Intel XPU kernel launch with extended launch properties; enqueue only"
        ),
        "urKernelSetArgValue": (
            "Intel XPU: sets a by-value kernel argument before a launch; host-only"
        ),
        "urKernelSetArgPointer": (
            "Intel XPU: sets a pointer kernel argument before a launch; host-only"
        ),
        "urKernelSetArgMemObj": (
            "Intel XPU: sets a memory-object kernel argument before a launch; host-only"
        ),
        "urKernelCreate": (
            "Intel XPU: creates a kernel object from a built program (first use of a kernel)"
        ),
        "urProgramCreateWithIL": (
            "Intel XPU: creates a program from SPIR-V (first use of a kernel module; warm-up)"
        ),
        "urProgramBuild": (
            "Intel XPU: JIT-compiles a SPIR-V program for the device; milliseconds to seconds, so "
            "it should appear only during warm-up"
        ),
        "urProgramBuildExp": (
            "Intel XPU: JIT-compiles a SPIR-V program for the device; slow, warm-up only"
        ),
        "urEnqueueEventsWait": (
            "Intel XPU: makes a queue wait on the device for events (a cross-queue dependency); "
            "the CPU does not block"
        ),
        "urEnqueueEventsWaitWithBarrier": (
            "Intel XPU: enqueues a barrier that orders later commands after given events; the CPU "
            "does not block"
        ),
        "urEventRelease": "Intel XPU: releases an event object; host-only",
        "urQueueFlush": "Intel XPU: submits queued commands to the device without waiting",
        "urEventGetProfilingInfo": (
            "Intel XPU: reads an event's device timestamps (profiling); host-only"
        ),
        "piEnqueueKernelLaunch": (
            "Intel XPU (SYCL plugin interface, older oneAPI): enqueues a kernel and returns "
            "without waiting, the counterpart of cudaLaunchKernel"
        ),
        "zeCommandListAppendLaunchKernel": (
            "Intel XPU (Level Zero): appends a kernel launch to a command list; enqueue only"
        ),
    },
    "sync": {
        "aten::item": (
            "Tensor.item(): returns the value of a one-element tensor as a Python number via "
            "aten::_local_scalar_dense; on a GPU tensor this is a synchronisation (the CPU waits "
            "until the GPU has finished all queued work, then copies the value back), a classic "
            "hidden stall when a loop logs loss.item() every step; on CPU tensors (e.g. the "
            "optimizers' step counters) it is just a read"
        ),
        "aten::_local_scalar_dense": (
            "reads the single element of a tensor into a host number, the real work behind "
            ".item(), float(t), int(t) and if t; for a GPU tensor it copies one element "
            "device-to-host and so waits for every kernel queued before it (a host-device "
            "synchronisation), so its time is mostly GPU work the CPU sat waiting for, not the "
            "copy"
        ),
        "aten::is_nonzero": (
            "bool(t) for a one-element tensor (e.g. if t:, while t:); it reads the value via item, "
            "so on a GPU tensor it synchronises the CPU with the GPU"
        ),
        "cudaStreamSynchronize": (
            "blocks the CPU until all work queued on one stream has finished; its CPU time is time "
            "spent waiting for the GPU (caused by .item(), .cpu(), .tolist(), printing a tensor, "
            "blocking device-to-host copies or torch.cuda.Stream.synchronize), and while it waits "
            "no new work is queued, so the GPU may then idle"
        ),
        "cudaDeviceSynchronize": (
            "blocks the CPU until all work on all streams of the device has finished "
            "(torch.cuda.synchronize(), benchmarking code, profiler flushes); its time is GPU work "
            "the CPU waited for, and the GPU queue drains meanwhile"
        ),
        "cudaEventSynchronize": (
            "blocks the CPU until a recorded event completes (torch.cuda.Event.synchronize, timing "
            "with elapsed_time, waiting for a non_blocking copy); waiting time, like a stream sync"
        ),
        "cudaStreamWaitEvent": (
            "makes a stream wait, on the GPU, for an event recorded on another stream: a "
            "cross-stream dependency (NCCL, copy or side streams); the CPU does not block, so its "
            "CPU time is tiny"
        ),
        "cuStreamSynchronize": (
            "CUDA driver API: blocks the CPU until all work on a stream has finished; time spent "
            "waiting for the GPU"
        ),
        "cuCtxSynchronize": (
            "CUDA driver API: blocks the CPU until all work in the context has finished, like "
            "cudaDeviceSynchronize"
        ),
        "cuEventSynchronize": "CUDA driver API: blocks the CPU until an event has completed",
        "hipMemcpyWithStream": (
            "ROCm's synchronous copy on a stream: PyTorch on ROCm uses it for copies that must "
            "complete before returning (e.g. device-to-host into pageable memory, .item(), "
            ".cpu()), so the CPU waits for all work queued on the stream, a hidden synchronisation"
        ),
        "synchronizeStream": (
            "MTIA runtime: blocks the CPU until all work queued on a stream has finished; time "
            "spent waiting for the device"
        ),
        "synchronize": (
            "MTIA runtime: blocks the CPU until the device has finished its queued work; time "
            "spent waiting for the device"
        ),
        "enqueueCommand waitOnEvent": (
            "MTIA runtime: makes a stream wait on the device for an event (a cross-stream "
            "dependency); the CPU does not block"
        ),
        "urEventWait": (
            "Intel XPU: blocks the CPU until the given events complete, like cudaEventSynchronize; "
            "time spent waiting for the device"
        ),
        "urQueueFinish": (
            "Intel XPU: blocks the CPU until all commands in a queue have finished "
            "(torch.xpu.synchronize, stream sync); time spent waiting for the device"
        ),
        "piEventsWait": (
            "Intel XPU (SYCL plugin interface, older oneAPI): blocks the CPU until events "
            "complete; time spent waiting for the device"
        ),
        "zeEventHostSynchronize": (
            "Intel XPU (Level Zero): blocks the CPU until an event is signalled; time spent "
            "waiting for the device"
        ),
    },
    "memcpy": {
        "cudaMemcpyAsync": (
            "enqueues a copy between host and device or within the device; it returns at once only "
            "for device-to-device copies and copies from or to pinned memory; a copy from pageable "
            "host memory makes the CPU wait, and for blocking copies (non_blocking=False, .item(), "
            ".cpu()) PyTorch follows it with cudaStreamSynchronize, so a long one usually hides a "
            "sync"
        ),
        "cudaMemcpy": (
            "synchronous copy: the CPU waits for earlier work on the default stream and for the "
            "copy itself"
        ),
        "cudaMemcpy2DAsync": (
            "enqueues a strided 2-D copy (e.g. of a non-contiguous slice) between host and device "
            "or within the device"
        ),
        "cudaMemcpyPeerAsync": "enqueues a copy between two GPUs (P2P over NVLink or PCIe)",
        "cudaMemcpyToSymbol": (
            "copies host data into a device global (constant) symbol; synchronous"
        ),
        "cudaMemsetAsync": (
            "enqueues a fill of device memory with a byte value (how zero_/zeros are often done on "
            "CUDA, and buffers that NCCL and libraries clear); enqueue only"
        ),
        "cudaMemset": "synchronous fill of device memory with a byte value",
        "cudaMemsetD32Async": "enqueues a fill of device memory with a 32-bit value",
        "cuMemcpyAsync": "CUDA driver API: enqueues a copy (host-device or device-device)",
        "cuMemcpyHtoDAsync": "CUDA driver API: enqueues a host-to-device copy",
        "cuMemcpyDtoHAsync": (
            "CUDA driver API: enqueues a device-to-host copy (the CPU waits if the host memory is "
            "pageable)"
        ),
        "cuMemsetD8Async": "CUDA driver API: enqueues a byte fill of device memory",
        "cuMemsetD32Async": "CUDA driver API: enqueues a 32-bit fill of device memory",
        "enqueueCommand memcpyHtoDAsync": (
            "MTIA runtime: enqueues a host-to-device copy on a stream"
        ),
        "enqueueCommand memcpyDtoHAsync": (
            "MTIA runtime: enqueues a device-to-host copy on a stream"
        ),
        "urEnqueueUSMMemcpy": (
            "Intel XPU: copies USM memory (host-device or device-device), asynchronous unless the "
            "call is blocking"
        ),
        "urEnqueueUSMFill": (
            "Intel XPU: fills device memory with a pattern, the counterpart of cudaMemsetAsync"
        ),
        "urEnqueueMemBufferCopy": "Intel XPU: copies between memory buffers on the device",
        "piextUSMEnqueueMemcpy": (
            "Intel XPU (SYCL plugin interface, older oneAPI): copies USM memory between host and "
            "device"
        ),
        "zeCommandListAppendMemoryCopy": (
            "Intel XPU (Level Zero): appends a memory copy to a command list"
        ),
    },
    "profiler": {
        "ProfilerStep*": (
            "all ProfilerStep#N rows merged into one, as torch's table does: each is one step of "
            "the profiler's schedule (between prof.step() calls); its total is the whole training "
            "step and its self time the loop's Python work outside any other op"
        ),
        "Activity Buffer Request": (
            "profiler overhead: Kineto handing CUPTI/roctracer a new buffer for device activity "
            "records; not your program's work, so leave it out when reading CPU time"
        ),
        "[memory]": (
            "a memory event of profile_memory=True (an allocation with positive bytes, a free with "
            "negative bytes), an instant with no duration"
        ),
        "[OutOfMemory]": (
            "the profiler's record of an allocation that failed for lack of device memory"
        ),
        "profiler::_record_function_enter": (
            "opens a record_function range (torch.profiler.record_function, Lightning's [pl] "
            "actions); profiler overhead, dropped from torch's table"
        ),
        "profiler::_record_function_enter_new": (
            "opens a record_function range (torch.profiler.record_function, Lightning's [pl] "
            "actions); profiler overhead, dropped from torch's table"
        ),
        "profiler::_record_function_exit": (
            "closes a record_function range; profiler overhead, dropped from torch's table"
        ),
    },
    "other": {
        "aten::_assert_async": (
            "checks a condition on the device without a host sync (torch._assert_async); fails "
            "later, asynchronously"
        ),
        "aten::stride": (
            "returns one dimension's stride, a metadata query; recorded only by old profilers "
            "(torch <= 1.8) that logged every dispatcher call, e.g. cuDNN convolution reading "
            "strides, and costs a fraction of a microsecond each"
        ),
        "aten::size": (
            "returns one dimension's size, a metadata query recorded by old profilers; free"
        ),
        "aten::dim": "returns the number of dims, a metadata query recorded by old profilers; free",
        "aten::numel": "returns the number of elements, a metadata query; free",
        "aten::sym_size": (
            "returns one dimension's (possibly symbolic) size, a metadata query; free"
        ),
        "aten::sym_stride": (
            "returns one dimension's (possibly symbolic) stride, a metadata query; free"
        ),
        "aten::sym_numel": (
            "returns the (possibly symbolic) number of elements, a metadata query; free"
        ),
        "aten::is_contiguous": (
            "asks whether a tensor is contiguous in a memory format, a metadata query; free"
        ),
        "aten::is_same_size": (
            "asks whether two tensors have the same shape, a metadata query; free"
        ),
        "aten::is_floating_point": (
            "asks whether the dtype is floating point, a metadata query; free"
        ),
        "aten::is_complex": "asks whether the dtype is complex, a metadata query; free",
        "aten::is_pinned": (
            "asks whether a CPU tensor lives in page-locked (pinned) memory (pin_memory calls it "
            "first to skip tensors already pinned); a cheap driver query"
        ),
        "aten::result_type": (
            "computes the dtype an operation on given tensors or scalars would produce (type "
            "promotion), a metadata query with no data touched"
        ),
        "aten::_has_compatible_shallow_copy_type": (
            "checks whether param.data = t may swap in another tensor's storage (same tensor "
            "type), recorded when modules are moved with .to()/.cuda() or parameters reassigned; "
            "metadata only"
        ),
        "aten::_version": (
            "reads a tensor's in-place version counter (autograd's check that saved tensors were "
            "not modified); dropped from torch's table"
        ),
        "aten::output_nr": (
            "reads which output of its autograd node a tensor is; dropped from torch's table"
        ),
        "aten::is_leaf": "asks whether a tensor is an autograd leaf; dropped from torch's table",
        "aten::requires_grad_": "sets requires_grad on a tensor in place, metadata only",
        "aten::retain_grad": "asks autograd to keep the .grad of a non-leaf tensor, metadata only",
        "aten::lift_fresh": (
            "marks a tensor freshly created by torch.tensor(...) for functionalization and "
            "tracing; a no-op in eager mode, so its rows cost only dispatch"
        ),
        "aten::lift": (
            "marks a tensor as a constant input for functionalization and tracing; a no-op in "
            "eager mode"
        ),
        "aten::lift_fresh_copy": (
            "copies a freshly created constant tensor (functionalization under tracing)"
        ),
        "aten::_assert_tensor_metadata": (
            "checks a tensor's dtype, device and sizes against expectations (torch.compile/export "
            "graphs); metadata only"
        ),
        "forward": (
            "a TorchScript method named forward (a scripted or traced module) running in the "
            "TorchScript interpreter; its total is the module's forward and its children are the "
            "ops it executes"
        ),
        "<forward op>": (
            "TorchScript's graph executor running the forward graph of a differentiable subgraph "
            "(autodiff of a scripted or traced model)"
        ),
        "TorchDynamo Cache Lookup": (
            "torch.compile's guard check on entering a compiled function: picks the cached "
            "compiled code whose guards match (or triggers a recompile); host overhead on every "
            "call"
        ),
        "Pregraph bytecode": (
            "torch.compile: the Python bytecode that runs before the compiled graph in a compiled "
            "frame (setting up its inputs); host overhead"
        ),
        "AOTDispatcher Runtime Wrapper Prologue": (
            "torch.compile (AOTAutograd): the runtime wrapper's preparation of the compiled "
            "graph's inputs before it runs; host overhead"
        ),
        "DistributedDataParallel.forward": (
            "DDP's wrapper forward: syncs buffers from rank 0 if broadcast_buffers is on, rebuilds "
            "gradient buckets in the first iterations, then runs the module's forward, so its "
            "total is essentially the model's forward"
        ),
        "aten::_nested_tensor_from_tensor_list": (
            "builds a nested (ragged) tensor from a list of tensors"
        ),
    },
}

#: Dispatch chains: a name -> the names the same call takes at deeper levels, outermost
#: first. Where the deepest level depends on the backend (cuDNN, MIOpen, oneDNN, ...) the
#: alternatives are all listed and a trace shows only one of them.
CHAINS: Final[dict[str, tuple[str, ...]]] = {
    "aten::conv1d": (
        "aten::convolution",
        "aten::_convolution",
        "aten::cudnn_convolution",
        "aten::miopen_convolution",
        "aten::mkldnn_convolution",
    ),
    "aten::conv2d": (
        "aten::convolution",
        "aten::_convolution",
        "aten::cudnn_convolution",
        "aten::miopen_convolution",
        "aten::mkldnn_convolution",
        "aten::_slow_conv2d_forward",
        "aten::thnn_conv2d",
    ),
    "aten::conv3d": (
        "aten::convolution",
        "aten::_convolution",
        "aten::cudnn_convolution",
        "aten::miopen_convolution",
        "aten::mkldnn_convolution",
    ),
    "aten::conv_transpose1d": ("aten::convolution", "aten::_convolution"),
    "aten::conv_transpose2d": (
        "aten::convolution",
        "aten::_convolution",
        "aten::cudnn_convolution_transpose",
        "aten::miopen_convolution_transpose",
        "aten::mkldnn_convolution",
        "aten::slow_conv_transpose2d",
    ),
    "aten::conv_transpose3d": ("aten::convolution", "aten::_convolution"),
    "aten::convolution": (
        "aten::_convolution",
        "aten::cudnn_convolution",
        "aten::miopen_convolution",
        "aten::mkldnn_convolution",
        "aten::_slow_conv2d_forward",
        "aten::thnn_conv2d",
    ),
    "aten::_convolution": (
        "aten::cudnn_convolution",
        "aten::miopen_convolution",
        "aten::mkldnn_convolution",
        "aten::_slow_conv2d_forward",
        "aten::thnn_conv2d",
    ),
    "aten::thnn_conv2d": ("aten::_slow_conv2d_forward",),
    "aten::linear": ("aten::addmm", "aten::matmul", "aten::mm"),
    "aten::matmul": ("aten::mm", "aten::bmm"),
    "aten::batch_norm": (
        "aten::_batch_norm_impl_index",
        "aten::cudnn_batch_norm",
        "aten::miopen_batch_norm",
        "aten::native_batch_norm",
    ),
    "aten::_batch_norm_impl_index": (
        "aten::cudnn_batch_norm",
        "aten::miopen_batch_norm",
        "aten::native_batch_norm",
    ),
    "aten::layer_norm": ("aten::native_layer_norm",),
    "aten::group_norm": ("aten::native_group_norm",),
    "aten::instance_norm": ("aten::batch_norm",),
    "aten::rms_norm": ("aten::_fused_rms_norm",),
    "aten::relu": ("aten::clamp_min",),
    "aten::relu_": ("aten::clamp_min_",),
    "aten::log_sigmoid": ("aten::log_sigmoid_forward",),
    "aten::softmax": ("aten::_softmax",),
    "aten::log_softmax": ("aten::_log_softmax",),
    "aten::nll_loss_nd": ("aten::nll_loss", "aten::nll_loss_forward"),
    "aten::nll_loss": ("aten::nll_loss_forward",),
    "aten::max_pool2d": ("aten::max_pool2d_with_indices",),
    "aten::max_pool3d": ("aten::max_pool3d_with_indices",),
    "aten::adaptive_avg_pool2d": ("aten::_adaptive_avg_pool2d",),
    "aten::adaptive_avg_pool3d": ("aten::_adaptive_avg_pool3d",),
    "aten::dropout": ("aten::native_dropout",),
    "aten::embedding": ("aten::index_select",),
    "aten::embedding_backward": ("aten::embedding_dense_backward",),
    "aten::embedding_bag": ("aten::_embedding_bag",),
    "aten::scaled_dot_product_attention": (
        "aten::_scaled_dot_product_flash_attention",
        "aten::_scaled_dot_product_efficient_attention",
        "aten::_scaled_dot_product_cudnn_attention",
        "aten::_scaled_dot_product_flash_attention_for_cpu",
        "aten::_scaled_dot_product_attention_math",
    ),
    "aten::_scaled_dot_product_flash_attention": ("aten::_flash_attention_forward",),
    "aten::_scaled_dot_product_flash_attention_backward": ("aten::_flash_attention_backward",),
    "aten::_scaled_dot_product_efficient_attention": ("aten::_efficient_attention_forward",),
    "aten::_scaled_dot_product_efficient_attention_backward": (
        "aten::_efficient_attention_backward",
    ),
    "aten::index_put_": ("aten::_index_put_impl_",),
    "aten::reshape": ("aten::view", "aten::_reshape_alias", "aten::_unsafe_view"),
    "aten::flatten": ("aten::reshape", "aten::view"),
    "aten::t": ("aten::transpose", "aten::as_strided"),
    "aten::chunk": ("aten::split",),
    "aten::to": ("aten::_to_copy", "aten::copy_"),
    "aten::_to_copy": ("aten::copy_",),
    "aten::type_as": ("aten::to",),
    "aten::contiguous": ("aten::clone",),
    "aten::pad": ("aten::constant_pad_nd",),
    "aten::pin_memory": ("aten::_pin_memory",),
    "aten::item": ("aten::_local_scalar_dense",),
}

# -- notes appended when a meaning is adapted to a variant of the name --------------------

IN_PLACE_NOTE: Final = (
    " (in place: this trailing-underscore variant overwrites its first operand instead of"
    " allocating a new tensor)"
)
OUT_NOTE: Final = " (out= variant: writes into a preallocated output tensor)"
PRIMS_NOTE: Final = (
    " (here as its prims:: primitive, recorded when PyTorch's Python reference"
    " decompositions in torch._refs run it)"
)
VERSIONED_NOTE: Final = " (a versioned or per-thread-default-stream variant of the same call)"

# -- autograd ------------------------------------------------------------------------------

#: Backward-node stems whose forward op is not ``aten::`` + the stem in snake case.
BACKWARD_FORWARD_OPS: Final[dict[str, str]] = {
    "SlowConv2D": "aten::_slow_conv2d_forward",
    "NllLoss2D": "aten::nll_loss2d_forward",
    "GridSampler2D": "aten::grid_sampler_2d",
    "Im2Col": "aten::im2col",
    "Col2Im": "aten::col2im",
    "Log1P": "aten::log1p",
    "NumpyT": "aten::numpy_T",
}

#: What the backward of an op of each category costs, for backward-node meanings.
BACKWARD_COST: Final[dict[str, str]] = {
    "convolution": "two convolutions, one for the input gradient and one for the weight "
    "gradient, plus a sum for the bias: about twice the forward's time",
    "matmul": "two matrix multiplies, the output gradient times the weight for the input "
    "gradient and the transposed input times it for the weight gradient, so about twice the "
    "forward's FLOPs",
    "normalization": "reduction-heavy, memory-bound passes that use the saved statistics to "
    "form the input, weight and bias gradients",
    "activation": "one elementwise pass over the gradient and the saved input or output",
    "pointwise": "one or two elementwise passes over the gradient",
    "reduction": "a broadcast of the gradient back to the input's shape, or a scatter to the "
    "selected positions",
    "softmax": "one row-wise pass using the saved output",
    "loss": "elementwise work over the loss inputs, usually cheap",
    "pooling": "routing or spreading each output gradient back over its window",
    "dropout": "a multiply of the gradient by the saved mask and scale",
    "embedding": "accumulating gradient rows into the table's gradient, a full-size zeroed "
    "tensor unless sparse=True",
    "attention": "recomputing attention blocks to form the query, key and value gradients, "
    "about twice the forward's work",
    "indexing": "a scatter or gather of the gradient to the indexed positions",
    "view": "only a reshape or re-stride of the gradient, cheap unless a copy is needed",
    "copy": "a copy of the gradient back, converting dtype or device as the forward did",
}
BACKWARD_COST_DEFAULT: Final = "the backward computation of that op"

# -- collectives ---------------------------------------------------------------------------

#: Name prefix -> (who runs the collective, what its CPU range covers).
COLLECTIVE_PREFIXES: Final[dict[str, tuple[str, str]]] = {
    "nccl:": (
        "NCCL",
        "the CPU range only enqueues the work on NCCL's stream; the transfer runs as an nccl "
        "kernel on the GPU and blocks the CPU only when something waits for it",
    ),
    "gloo:": (
        "Gloo",
        "Gloo runs collectives on CPU threads, so this range covers the whole transfer "
        "including the wait for the slowest rank",
    ),
    "mpi:": ("MPI", "MPI collectives block the calling thread, so the range covers the transfer"),
    "ucc:": ("UCC", "the CPU range covers posting the collective to UCC's progress engine"),
    "xccl:": (
        "oneCCL (XPU)",
        "the CPU range enqueues the collective; the transfer runs on the XPU",
    ),
    "c10d::": (
        "c10d dispatcher op for",
        "torch.distributed hands the call to the process group's backend here; for NCCL its "
        "CPU time is the enqueue, and the backend's own range (nccl:..., record_param_comms) "
        "nests inside",
    ),
    "_c10d_functional::": (
        "functional collective (DTensor, FSDP2, torch.compile) for",
        "it issues the collective and returns at once; _c10d_functional::wait_tensor waits "
        "for the result",
    ),
}

#: Collective -> what it does.
COLLECTIVES: Final[dict[str, str]] = {
    "all_reduce": "reduces (by default sums) a tensor across all ranks and leaves the result "
    "on every rank, e.g. DDP's gradient averaging",
    "all_gather": "gathers every rank's tensor onto every rank (FSDP gathers sharded "
    "parameters this way before using them)",
    "reduce_scatter": "reduces across ranks and leaves each rank one shard of the result "
    "(FSDP's gradient reduction)",
    "broadcast": "copies a tensor from one rank to all others (DDP syncs parameters and "
    "buffers from rank 0)",
    "all_to_all": "each rank sends a distinct slice to every other rank (TorchRec embedding "
    "exchange, mixture-of-experts token routing)",
    "send": "sends a tensor to one peer rank (point-to-point, e.g. pipeline parallelism)",
    "recv": "receives a tensor from one peer rank (point-to-point); its time includes "
    "waiting for the sender",
    "barrier": "waits until every rank reaches this point; its time is the wait for the "
    "slowest rank, a straggler indicator",
    "reduce": "reduces a tensor across ranks onto one destination rank",
    "gather": "collects every rank's tensor onto one destination rank",
    "scatter": "splits a tensor on one rank and sends one piece to each rank",
    "coalesced": "a group of collectives issued together and launched as one NCCL group",
    "wait_tensor": "waits for an asynchronous collective's result before it is used (on NCCL "
    "a stream wait, not a CPU block)",
}

#: Spellings of collectives across backends and torch versions -> a key of `COLLECTIVES`.
COLLECTIVE_ALIASES: Final[dict[str, str]] = {
    "allreduce": "all_reduce",
    "allreduce_coalesced": "all_reduce",
    "all_reduce_coalesced": "all_reduce",
    "all_reduce_barrier": "barrier",
    "allgather": "all_gather",
    "allgather_base": "all_gather",
    "all_gather_base": "all_gather",
    "allgather_coalesced": "all_gather",
    "allgather_into_tensor_coalesced": "all_gather",
    "all_gather_into_tensor": "all_gather",
    "all_gather_into_tensor_coalesced": "all_gather",
    "reduce_scatter_base": "reduce_scatter",
    "reduce_scatter_tensor": "reduce_scatter",
    "reduce_scatter_tensor_coalesced": "reduce_scatter",
    "alltoall": "all_to_all",
    "alltoall_base": "all_to_all",
    "all_to_all_single": "all_to_all",
    "recv_any_source": "recv",
    "monitored_barrier": "barrier",
}

# -- name families ---------------------------------------------------------------------------

#: (prefix, category, meaning); ``{rest}`` is the part of the name after the prefix.
PREFIX_RULES: Final[tuple[tuple[str, str, str], ...]] = (
    (
        "ProfilerStep#",
        "profiler",
        "step {rest} of the profiler's schedule (the range between two prof.step() calls); "
        "its total is the whole training step and its self time the loop's Python work "
        "outside any other op",
    ),
    (
        "Optimizer.step#",
        "optimizer",
        "the optimizer step {rest} (torch.optim wraps every step() in this range); its "
        "children are the per-parameter (for-loop), _foreach_ (multi-tensor) or _fused_ ops "
        "of the update, and its self time is the Python loop over parameter groups",
    ),
    (
        "Optimizer.zero_grad#",
        "optimizer",
        "Optimizer.zero_grad() of {rest}: with set_to_none=True (the default since torch "
        "2.0) it only drops the .grad references and has no children; with False it zeroes "
        "every gradient",
    ),
    (
        "enumerate(DataLoader)#",
        "other",
        "the training loop waiting in next() on the DataLoader ({rest}): "
        "_SingleProcessDataLoaderIter loads and collates in the main process, "
        "_MultiProcessingDataLoaderIter waits for worker processes; a long one means the step "
        "is starved for input data",
    ),
    (
        "Torch-Compiled Region",
        "other",
        "a frame compiled by torch.compile running its generated code (the numbers are the "
        "frame id and its recompilation count); its total is the compiled graph's execution, "
        "with the kernels it launches as triton_* or aten rows inside",
    ),
    (
        "sglang_profiler::",
        "profiler",
        "a range sglang's profiler wraps around one model function (module_function_line: "
        "{rest}); its total is that function's time, and the op doing the work is its child",
    ),
    (
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
        "runtime",
        "asks how many blocks of a kernel fit on one SM, to size a grid (PyTorch's "
        "reductions, cuDNN and cuBLAS use it); host-only, no device work",
    ),
    (
        "fbgemm::split_embedding",
        "embedding",
        "FBGEMM table-batched embedding (TBE) kernel used by TorchRec: looks up and pools many "
        "embedding tables in one call (backward variants fuse the optimizer update)",
    ),
)

#: Inductor's Triton kernel prefixes -> (category, kind of kernel).
TRITON_KINDS: Final[dict[str, tuple[str, str]]] = {
    "poi": ("pointwise", "pointwise"),
    "red": ("reduction", "reduction"),
    "per": ("reduction", "persistent reduction"),
    "tem": ("matmul", "template (GEMM or convolution)"),
    "for": ("optimizer", "foreach (multi-tensor)"),
}
# -- device runtime calls ------------------------------------------------------------------

#: Runtime API family (name prefix) -> how to call it in a meaning.
RUNTIME_FAMILIES: Final[dict[str, str]] = {
    "cuda": "CUDA runtime",
    "cu": "CUDA driver",
    "hip": "HIP (ROCm)",
    "ur": "Intel XPU (Unified Runtime)",
    "pi": "Intel XPU (SYCL plugin interface)",
    "ze": "Intel XPU (Level Zero)",
    "nvrtc": "NVRTC (runtime compilation)",
}

#: (word in the call's name, category, meaning with ``{api}``), first match wins; calls with
#: none of these words are host-side queries and setup.
RUNTIME_KEYWORDS: Final[tuple[tuple[str, str, str], ...]] = (
    (
        "Synchronize",
        "sync",
        "{api} call that blocks the CPU until the device work it names "
        "has finished, so its time is time spent waiting for the device",
    ),
    (
        "Finish",
        "sync",
        "{api} call that blocks the CPU until a queue's work has finished, so "
        "its time is time spent waiting for the device",
    ),
    (
        "EnqueueEventsWait",
        "sync",
        "{api} call that orders later device work after events (a "
        "cross-queue dependency); the CPU does not block",
    ),
    (
        "WaitEvent",
        "sync",
        "{api} call that makes a stream wait, on the device, for an event "
        "(a cross-stream dependency); the CPU does not block",
    ),
    (
        "Wait",
        "sync",
        "{api} call that blocks the CPU until events complete, so its time is "
        "time spent waiting for the device",
    ),
    (
        "Launch",
        "runtime",
        "{api} launch: enqueues device work and returns without waiting, "
        "so its CPU time is launch overhead",
    ),
    (
        "Memcpy",
        "memcpy",
        "{api} memory copy between host and device or within the device; "
        "the CPU waits unless it is an asynchronous copy involving pinned memory",
    ),
    ("Copy", "memcpy", "{api} memory copy between host and device or within the device"),
    ("Memset", "memcpy", "{api} fill of device memory with a value, like cudaMemsetAsync"),
    ("Fill", "memcpy", "{api} fill of device memory with a pattern, like cudaMemsetAsync"),
    (
        "Alloc",
        "allocation",
        "{api} memory allocation, slow compared with PyTorch's caching "
        "allocators, so it should be rare once their caches are warm",
    ),
    (
        "Free",
        "allocation",
        "{api} release of memory; releasing device memory can synchronise the device",
    ),
)
RUNTIME_DEFAULT: Final = (
    "runtime",
    "{api} call made on the host (a query, setup or bookkeeping call); it runs on the CPU and "
    "launches no device work by itself",
)
