#!/usr/bin/env python3
"""Times FlashAttention-2 as PyTorch ships it (scaled_dot_product_attention's flash backend, the
FlashAttention-2 CUDA kernels built into torch) on an NVIDIA GPU, and writes measurement rows that
`attnsim validate` reads (preset fa2: forward; backward = zeroing dQ's accumulator, the dO.O
preprocess, the main kernel and dQ's conversion, as torch's flash backward launches them).

Shapes: the FlashAttention-3 paper's (B x N = 16k tokens, 16 heads of d = 128, bf16), causal or
not, N = 512 .. 16k. Each case: 3 warm-ups, then 10 calls timed with CUDA events while a thread
samples the SM clock (NVML) every 20 ms. Tensors are allocated (B, N, H, d), as the flash kernels
read them, and handed to SDPA as (B, H, N, d) views.

Usage: python3 validation/scripts/torch_fa2.py OUT.csv
Exit: 0 done; 2 bad arguments; 4 no CUDA GPU; 5 torch without the flash backend.
"""
import datetime
import sys
import threading
import time

HEADER = ("arch,gpu,kernel,preset,direction,batch,heads_q,heads_kv,seqlen_q,seqlen_k,head_dim,dtype,causal,"
          "metric,measured,unit,source,conditions\n")


def main():
    if len(sys.argv) != 2:
        print("usage: torch_fa2.py OUT.csv", file=sys.stderr)
        return 2
    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        print("torch_fa2: no CUDA GPU found", file=sys.stderr)
        return 4
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        print("torch_fa2: this torch has no torch.nn.attention.sdpa_kernel", file=sys.stderr)
        return 5
    import pynvml
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    gpu = torch.cuda.get_device_name(0)
    arch = "h200" if "H200" in gpu else "h100" if "H100" in gpu else ""
    driver = pynvml.nvmlSystemGetDriverVersion()
    driver = driver.decode() if isinstance(driver, bytes) else driver
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    kernel = f"torch {torch.__version__} SDPA flash backend (FlashAttention-2)"

    def sampled_clocks(fn):
        seen, stop = [], threading.Event()

        def sample():
            while not stop.is_set():
                seen.append(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))
                time.sleep(0.02)
        th = threading.Thread(target=sample)
        th.start()
        try:
            result = fn()
        finally:
            stop.set()
            th.join()
        return result, (min(seen), max(seen)) if seen else (0, 0)

    def timed(call, reps=10, warmup=3):
        for _ in range(warmup):
            call()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def run():
            start.record()
            for _ in range(reps):
                call()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / reps * 1e3  # us
        return sampled_clocks(run)

    heads, d = 16, 128
    rows = []
    with open(sys.argv[1], "w") as out:
        out.write(HEADER)
        for n in (512, 1024, 2048, 4096, 8192, 16384):
            batch = 16384 // n
            for causal in (False, True):
                shape = (batch, n, heads, d)
                q, k, v, grad = (torch.randn(shape, device="cuda", dtype=torch.bfloat16) for _ in range(4))
                q, k, v = (x.requires_grad_() for x in (q, k, v))
                qt, kt, vt, gt = (x.transpose(1, 2) for x in (q, k, v, grad))
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    with torch.no_grad():
                        fwd_us, fwd_clk = timed(lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal))
                    o = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
                    bwd_us, bwd_clk = timed(lambda: torch.autograd.grad(o, (q, k, v), gt, retain_graph=True))
                flops = 4.0 * batch * heads * n * n * d * (0.5 if causal else 1.0)
                for direction, us, clk, f in (("fwd", fwd_us, fwd_clk, flops), ("bwd", bwd_us, bwd_clk, 2.5 * flops)):
                    cond = (f"{gpu}; driver {driver}; torch {torch.__version__} CUDA {torch.version.cuda}; clocks not locked; "
                            f"SM clock seen {clk[0]}-{clk[1]} MHz (NVML every 20 ms); {date}; mean of 10 calls after 3 warm-up")
                    common = (f"{arch},{gpu},{kernel},fa2,{direction},{batch},{heads},{heads},{n},{n},{d},bf16,"
                              f"{int(causal)}")
                    out.write(f'{common},time_us,{us:.3f},us,attnsim validation/scripts/torch_fa2.py,"{cond}"\n')
                    out.write(f'{common},tflops,{f / (us * 1e-6) / 1e12:.3f},TFLOP/s,attnsim validation/scripts/torch_fa2.py,"{cond}"\n')
                    print(f"{direction} B={batch} N={n} causal={int(causal)}: {us:.1f} us, {f / (us * 1e-6) / 1e12:.1f} TFLOP/s, "
                          f"SM {clk[0]}-{clk[1]} MHz", flush=True)
                del q, k, v, grad, o
    return 0


if __name__ == "__main__":
    sys.exit(main())
