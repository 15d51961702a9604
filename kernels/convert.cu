// framefeed's one CUDA kernel: an NVDEC surface (NV12, or P010/P016 for more than 8 bits) to the batch's
// output in one pass: the video's turn (its display matrix), resize, crop window, YUV -> RGB with the stream's matrix and range, rounding to 8-bit
// levels (as the CPU path does; to 16-bit levels for deeper samples and every type but u8, as the CPU path's
// RGB48 does), then type, normalization and layout.
//
// Header-free on purpose: no CUDA toolkit is needed to build it. The PTX that framefeed loads
// (kernels/convert.ptx) is made with Debian's clang by `kernels/build.sh`. Compiled as plain C++ (no
// __CUDA__), the same per-pixel code gives `framefeed_convert_host`, which the tests run on the CPU to check
// the kernel's arithmetic against the CPU backend on machines without a GPU.
//
// The parameter block's layout must match `ConvertParams` in src/ffi/cuda/params.rs.

#ifdef __CUDA__
#define FF_DEVICE __attribute__((device)) static inline
#else
#define FF_DEVICE static inline
#endif

typedef unsigned char ff_u8;
typedef unsigned short ff_u16;
typedef unsigned int ff_u32;
typedef unsigned long long ff_u64;

struct ConvertParams {
    ff_u64 luma;        // device address of the Y plane
    ff_u64 chroma;      // device address of the interleaved UV plane (half width, half height)
    ff_u64 out;         // device address of element 0 of the sequence's output
    int luma_pitch;     // bytes from one row to the next
    int chroma_pitch;
    int src_w, src_h;   // decoded size, as shown (sides swapped when `orient` turns a quarter)
    int high_depth;     // 0: 8-bit samples (NV12); 1: 16-bit words, MSB-aligned (P010, P016)
    int resized;        // 0: the frame is used at its decoded size
    int frame_w, frame_h; // size after the resize
    int filter;         // 0 nearest, 1 bilinear, 2 bicubic, 3 area
    int win_x, win_y;   // the window's top-left in the (resized) frame; may be negative (padding)
    int out_w, out_h;   // the window's size: the output frame's
    int dtype;          // 0 u8, 1 f32, 2 f16, 3 u16
    int layout;         // 0 FHWC, 1 FCHW, 2 CFHW
    int frames;         // frames of the sequence's output (its F)
    int frame_index;    // which of them this is
    int chroma_cubic;   // 0 repeats each chroma sample over 2x2 pixels (swscale's 8-bit fast path); 1
                        // interpolates it as swscale's scaled path does (the CPU backend's path for deeper
                        // samples and odd sizes unresized, and for 16-bit output of deeper samples resized)
    int orient;         // how a shown pixel is found in the surface (src/orientation.rs, `Orientation::code`):
                        // 1 mirrors the shown column, 2 the shown row, 4 then swaps column and row
    float matrix[9];    // RGB = matrix * (YUV levels - offset), rows R, G, B; in 8-bit level units
    float offset[3];
    float fill[3];      // output values outside the frame (output units)
    float scale[3];     // float outputs: level * scale + bias (8-bit levels, or 16-bit ones when deep)
    float bias[3];
    // HDR to SDR (src/transform/tonemap.rs, the CPU path, has the same steps and says where each comes from).
    int tonemap;        // 0 none, 1 hable, 2 mobius, 3 reinhard, 4 clip
    int hdr_transfer;   // 1 PQ, 2 HLG
    float tm_param;     // the curve's parameter, as the tonemap filter holds it
    float tm_peak;      // the signal peak, units of 100 cd/m2
    float tm_desat;     // desaturation strength (0: none)
    float tm_hable_peak; // hable(peak)
    float tm_linear;    // linear light of the EOTF's 1.0 (100 for PQ, 10 for HLG)
    float tm_primaries[9]; // linear RGB to BT.709 RGB, rows R, G, B
    float tm_luma[3];   // luma coefficients for desaturation
};

FF_DEVICE float ff_abs(float v) { return v < 0.0f ? -v : v; }
FF_DEVICE float ff_min(float a, float b) { return a < b ? a : b; }
FF_DEVICE float ff_max(float a, float b) { return a > b ? a : b; }
FF_DEVICE int ff_clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
FF_DEVICE float ff_floor(float v) {
    int i = (int)v;
    return (float)(v < (float)i ? i - 1 : i);
}

// One sample of plane `base` (8-bit or 16-bit words), as an 8-bit level (fractional for deeper samples), at
// (x, y) of the plane as shown (`pw` x `ph` samples): read where the turn puts it in the surface.
FF_DEVICE float ff_sample(const ConvertParams* p, ff_u64 base, int pitch, int x, int y, int pw, int ph, int step,
                          int comp) {
    if (p->orient) {
        int sx = (p->orient & 1) ? pw - 1 - x : x;
        int sy = (p->orient & 2) ? ph - 1 - y : y;
        x = (p->orient & 4) ? sy : sx;
        y = (p->orient & 4) ? sx : sy;
    }
    if (p->high_depth) {
        const ff_u16* row = (const ff_u16*)(base + (ff_u64)y * (ff_u64)pitch);
        return (float)row[x * step + comp] * (1.0f / 256.0f);
    }
    const ff_u8* row = (const ff_u8*)(base + (ff_u64)y * (ff_u64)pitch);
    return (float)row[x * step + comp];
}

// The resampling filter's weight at distance `d` (in source pixels, already divided by the filter's stretch).
FF_DEVICE float ff_weight(int filter, float d) {
    d = ff_abs(d);
    if (filter == 2) {
        // Keys cubic with a = -0.6 (swscale's default bicubic: B = 0, C = 0.6).
        const float a = -0.6f;
        if (d < 1.0f) return ((a + 2.0f) * d - (a + 3.0f)) * d * d + 1.0f;
        if (d < 2.0f) return ((a * d - 5.0f * a) * d + 8.0f * a) * d - 4.0f * a;
        return 0.0f;
    }
    if (filter == 3) return d < 0.5f ? 1.0f : 0.0f;
    return d < 1.0f ? 1.0f - d : 0.0f;
}

// Component `comp` of plane `base` (`pw` x `ph` samples, `step` components per sample) resampled at output
// pixel `o` of an axis scaled by `sx`, `sy` (source pixels per output pixel).
FF_DEVICE float ff_resample(const ConvertParams* p, ff_u64 base, int pitch, int pw, int ph, int step, int comp,
                            float cx, float cy, float sx, float sy) {
    if (p->filter == 0) {
        int x = ff_clampi((int)ff_floor(cx + 0.5f), 0, pw - 1);
        int y = ff_clampi((int)ff_floor(cy + 0.5f), 0, ph - 1);
        return ff_sample(p, base, pitch, x, y, pw, ph, step, comp);
    }
    float support = p->filter == 2 ? 2.0f : (p->filter == 3 ? 0.5f : 1.0f);
    // Downscaling stretches the filter over the source pixels an output pixel covers (antialiasing).
    float stretch_x = ff_max(1.0f, sx), stretch_y = ff_max(1.0f, sy);
    int x0 = (int)ff_floor(cx - support * stretch_x) + 1, x1 = (int)ff_floor(cx + support * stretch_x);
    int y0 = (int)ff_floor(cy - support * stretch_y) + 1, y1 = (int)ff_floor(cy + support * stretch_y);
    if (p->filter == 3) {
        x0 = (int)ff_floor(cx - support * stretch_x + 0.5f);
        x1 = (int)ff_floor(cx + support * stretch_x - 0.5f);
        y0 = (int)ff_floor(cy - support * stretch_y + 0.5f);
        y1 = (int)ff_floor(cy + support * stretch_y - 0.5f);
        if (x1 < x0) x1 = x0;
        if (y1 < y0) y1 = y0;
    }
    float sum = 0.0f, total = 0.0f;
    for (int y = y0; y <= y1; ++y) {
        float wy = p->filter == 3 ? 1.0f : ff_weight(p->filter, ((float)y - cy) / stretch_y);
        if (wy == 0.0f) continue;
        int yy = ff_clampi(y, 0, ph - 1);
        for (int x = x0; x <= x1; ++x) {
            float wx = p->filter == 3 ? 1.0f : ff_weight(p->filter, ((float)x - cx) / stretch_x);
            if (wx == 0.0f) continue;
            float w = wx * wy;
            sum += w * ff_sample(p, base, pitch, ff_clampi(x, 0, pw - 1), yy, pw, ph, step, comp);
            total += w;
        }
    }
    return total != 0.0f ? sum / total : 0.0f;
}

// swscale's fixed-point step (16.16) of a bicubic scaler from `src` to `dst` samples, as source samples per
// output sample.
FF_DEVICE float ff_sws_step(int src, int dst) {
    long long inc = (((long long)src << 16) + (dst >> 1)) / dst;
    return (float)inc * (1.0f / 65536.0f);
}

// swscale's bicubic taps (B = 0, C = 0.6) for output sample `o` of an axis scaled from `n` samples by `step`
// (both sample grids centred): the first tap's index (unclamped) and the weights of `taps` samples, summing to 1.
FF_DEVICE int ff_sws_taps(int o, int n, float step, float* weights, int* taps) {
    float pos = ((float)o + 0.5f) * step - 0.5f;
    // swscale's window: 5 taps (fewer on tiny planes) from trunc(pos - (size - 2) / 2), rounding toward zero.
    int size = n - 2 < 5 ? n - 2 : 5;
    if (size < 1) size = 1;
    float first = pos - (float)(size - 2) * 0.5f;
    int start = (int)first;
    float total = 0.0f;
    for (int j = 0; j < size; ++j) {
        weights[j] = ff_weight(2, (float)(start + j) - pos);
        total += weights[j];
    }
    for (int j = 0; j < size; ++j) weights[j] = total != 0.0f ? weights[j] / total : (j == 0 ? 1.0f : 0.0f);
    *taps = size;
    return start;
}

// Chroma sample (x, y) of component `comp`: of the surface's chroma plane (`cw` x `ch`), or (`resized`) of that
// plane resized to `ow` x `oh` (the resized frame's chroma) with the resize's filter.
FF_DEVICE float ff_chroma_at(const ConvertParams* p, int x, int y, int cw, int ch, int comp, int resized, int ow,
                             int oh) {
    if (!resized) return ff_sample(p, p->chroma, p->chroma_pitch, x, y, cw, ch, 2, comp);
    float csx = (float)cw / (float)ow, csy = (float)ch / (float)oh;
    float kx = ((float)x + 0.5f) * csx - 0.5f, ky = ((float)y + 0.5f) * csy - 0.5f;
    return ff_resample(p, p->chroma, p->chroma_pitch, cw, ch, 2, comp, kx, ky, csx, csy);
}

// Chroma component `comp` at pixel (x, y) of a `pic_w` x `pic_h` picture whose chroma plane is `plane_w` x
// `plane_h` (the surface's, or the resized frame's when `resized`), as swscale's scaled path for 4:2:0 to packed
// RGB (the CPU backend's path for deeper samples and odd sizes) computes it: vertically, the chroma rows are
// upscaled to the picture's height with its bicubic filter; horizontally, each chroma sample serves two
// pixels, except for an odd width, where swscale interpolates chroma to the full width with the same filter.
FF_DEVICE float ff_chroma_scaled(const ConvertParams* p, int x, int y, int pic_w, int pic_h, int plane_w,
                                 int plane_h, int comp, int resized, int cw, int ch) {
    float wy[5], wx[5];
    int ny, nx = 1;
    int y0 = ff_sws_taps(y, plane_h, ff_sws_step(plane_h, pic_h), wy, &ny);
    int x0 = x / 2;
    wx[0] = 1.0f;
    if (pic_w % 2 == 1) x0 = ff_sws_taps(x, plane_w, ff_sws_step(plane_w, pic_w), wx, &nx);
    float sum = 0.0f;
    for (int j = 0; j < ny; ++j) {
        int yy = ff_clampi(y0 + j, 0, plane_h - 1);
        float row = 0.0f;
        for (int i = 0; i < nx; ++i)
            row += wx[i] * ff_chroma_at(p, ff_clampi(x0 + i, 0, plane_w - 1), yy, cw, ch, comp, resized, plane_w,
                                        plane_h);
        sum += wy[j] * row;
    }
    return sum;
}

// x to the power y for x > 0 (the device's fast base-2 exponential and logarithm; the host's libm).
FF_DEVICE float ff_pow(float x, float y) {
#ifdef __CUDA__
    return __nvvm_ex2_approx_f(y * __nvvm_lg2_approx_f(x));
#else
    return __builtin_powf(x, y);
#endif
}

FF_DEVICE float ff_exp(float x) {
#ifdef __CUDA__
    return __nvvm_ex2_approx_f(x * 1.4426950408889634f);
#else
    return __builtin_expf(x);
#endif
}

// PQ's EOTF (fraction of 10000 cd/m2) and HLG's inverse OETF with its 1.2 OOTF (fraction of 1000 cd/m2).
FF_DEVICE float ff_eotf(int transfer, float e) {
    if (transfer == 2) {
        e = ff_max(e, 0.0f);
        float scene = e <= 0.5f ? e * e / 3.0f : (ff_exp((e - 0.55991073f) / 0.17883277f) + 0.28466892f) / 12.0f;
        return scene > 0.0f ? ff_pow(scene, 1.2f) : 0.0f;
    }
    if (e <= 0.0f) return 0.0f;
    float pw = ff_pow(e, 1.0f / 78.84375f);
    float num = ff_max(pw - 0.8359375f, 0.0f);
    float den = ff_max(18.8515625f - 18.6875f * pw, 1.17549435e-38f);
    return num > 0.0f ? ff_pow(num / den, 1.0f / 0.1593017578125f) : 0.0f;
}

FF_DEVICE float ff_hable(float x) {
    return (x * (x * 0.15f + 0.05f) + 0.004f) / (x * (x * 0.15f + 0.5f) + 0.06f) - 0.02f / 0.3f;
}

// Non-linear R'G'B' (BT.2100, unclipped) to SDR BT.709 levels in [0, 1]: linear light, BT.709 primaries,
// desaturation, the curve on the brightest channel, BT.1886's inverse.
FF_DEVICE void ff_tonemap(const ConvertParams* p, float* rgb) {
    float lin[3], out[3];
    for (int c = 0; c < 3; ++c) lin[c] = ff_eotf(p->hdr_transfer, rgb[c]) * p->tm_linear;
    for (int c = 0; c < 3; ++c)
        out[c] = p->tm_primaries[3 * c] * lin[0] + p->tm_primaries[3 * c + 1] * lin[1] + p->tm_primaries[3 * c + 2] * lin[2];
    if (p->tm_desat > 0.0f) {
        float luma = p->tm_luma[0] * out[0] + p->tm_luma[1] * out[1] + p->tm_luma[2] * out[2];
        float over = ff_max(luma - p->tm_desat, 1e-6f) / ff_max(luma, 1e-6f);
        for (int c = 0; c < 3; ++c) out[c] = out[c] * (1.0f - over) + luma * over;
    }
    float sig = ff_max(ff_max(ff_max(out[0], out[1]), out[2]), 1e-6f);
    float mapped;
    if (p->tonemap == 1) {
        mapped = ff_hable(sig) / p->tm_hable_peak;
    } else if (p->tonemap == 2) {
        float j = p->tm_param, peak = p->tm_peak;
        if (sig <= j) {
            mapped = sig;
        } else {
            float a = -j * j * (peak - 1.0f) / (j * j - 2.0f * j + peak);
            float b = (j * j - 2.0f * j * peak + peak) / ff_max(peak - 1.0f, 1e-6f);
            mapped = (b * b + 2.0f * b * j + j * j) / (b - a) * (sig + a) / (sig + b);
        }
    } else if (p->tonemap == 3) {
        mapped = sig / (sig + p->tm_param) * (p->tm_peak + p->tm_param) / p->tm_peak;
    } else {
        mapped = ff_min(ff_max(sig * p->tm_param, 0.0f), 1.0f);
    }
    float k = mapped / sig;
    for (int c = 0; c < 3; ++c) {
        float v = out[c] * k;
        rgb[c] = v > 0.0f ? ff_min(ff_pow(v, 1.0f / 2.4f), 1.0f) : 0.0f;
    }
}

// Chroma component `comp` at pixel (x, y) of a `pic_w` x `pic_h` picture whose chroma plane is `plane_w` x
// `plane_h`, as the tone mapper's swscale conversion reads it (the way zscale does): sited left and centred
// vertically, interpolated bilinearly.
FF_DEVICE float ff_chroma_sited(const ConvertParams* p, int x, int y, int plane_w, int plane_h, int comp,
                                int resized, int cw, int ch) {
    float fx = (float)x * 0.5f, fy = ((float)y + 0.5f) * 0.5f - 0.5f;
    float bx = ff_floor(fx), by = ff_floor(fy);
    float ax = fx - bx, ay = fy - by;
    int x0 = (int)bx, y0 = (int)by;
    float s[2][2];
    for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 2; ++i)
            s[j][i] = ff_chroma_at(p, ff_clampi(x0 + i, 0, plane_w - 1), ff_clampi(y0 + j, 0, plane_h - 1), cw, ch,
                                   comp, resized, plane_w, plane_h);
    return (s[0][0] * (1.0f - ax) + s[0][1] * ax) * (1.0f - ay) + (s[1][0] * (1.0f - ax) + s[1][1] * ax) * ay;
}

// f32 to IEEE half bits, rounding to nearest even (no intrinsics, so that host and device agree).
FF_DEVICE ff_u16 ff_f16_bits(float value) {
    union { float f; ff_u32 u; } v;
    v.f = value;
    ff_u32 x = v.u;
    ff_u32 sign = (x >> 16) & 0x8000u;
    ff_u32 exp = (x >> 23) & 0xffu;
    ff_u32 mant = x & 0x7fffffu;
    if (exp == 0xffu) return (ff_u16)(sign | 0x7c00u | (mant ? 0x200u : 0u));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (ff_u16)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return (ff_u16)sign;
        mant |= 0x800000u;
        ff_u32 shift = (ff_u32)(14 - e);
        ff_u32 half = mant >> shift;
        ff_u32 rest = mant & ((1u << shift) - 1u);
        ff_u32 mid = 1u << (shift - 1u);
        if (rest > mid || (rest == mid && (half & 1u))) half += 1u;
        return (ff_u16)(sign | half);
    }
    ff_u32 half = sign | ((ff_u32)e << 10) | (mant >> 13);
    ff_u32 rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) half += 1u;
    return (ff_u16)half;
}

FF_DEVICE void ff_store(const ConvertParams* p, int c, int ox, int oy, float value, int is_level) {
    ff_u64 w = (ff_u64)p->out_w, h = (ff_u64)p->out_h;
    ff_u64 f = (ff_u64)p->frame_index, frames = (ff_u64)p->frames, x = (ff_u64)ox, y = (ff_u64)oy;
    ff_u64 cc = (ff_u64)c;
    ff_u64 index;
    if (p->layout == 0) index = ((f * h + y) * w + x) * 3u + cc;
    else if (p->layout == 1) index = ((f * 3u + cc) * h + y) * w + x;
    else index = ((cc * frames + f) * h + y) * w + x;
    if (p->dtype == 0) {
        float v = ff_min(ff_max(value, 0.0f), 255.0f);
        ((ff_u8*)p->out)[index] = (ff_u8)(int)(v + 0.5f);
        return;
    }
    if (p->dtype == 3) {
        float v = ff_min(ff_max(value, 0.0f), 65535.0f);
        ((ff_u16*)p->out)[index] = (ff_u16)(int)(v + 0.5f);
        return;
    }
    float out = is_level ? value * p->scale[c] + p->bias[c] : value;
    if (p->dtype == 1) ((float*)p->out)[index] = out;
    else ((ff_u16*)p->out)[index] = ff_f16_bits(out);
}

// Computes and stores output pixel (ox, oy) of the frame.
FF_DEVICE void ff_convert_pixel(const ConvertParams* p, int ox, int oy) {
    if (ox >= p->out_w || oy >= p->out_h) return;
    int rx = p->win_x + ox, ry = p->win_y + oy;
    if (rx < 0 || ry < 0 || rx >= p->frame_w || ry >= p->frame_h) {
        for (int c = 0; c < 3; ++c) ff_store(p, c, ox, oy, p->fill[c], 0);
        return;
    }
    int cw = (p->src_w + 1) / 2, ch = (p->src_h + 1) / 2;
    float y, u, v;
    if (p->tonemap) {
        int ow = p->resized ? (p->frame_w + 1) / 2 : cw, oh = p->resized ? (p->frame_h + 1) / 2 : ch;
        if (!p->resized) {
            y = ff_sample(p, p->luma, p->luma_pitch, rx, ry, p->src_w, p->src_h, 1, 0);
        } else {
            float sx = (float)p->src_w / (float)p->frame_w, sy = (float)p->src_h / (float)p->frame_h;
            float lx = ((float)rx + 0.5f) * sx - 0.5f, ly = ((float)ry + 0.5f) * sy - 0.5f;
            y = ff_resample(p, p->luma, p->luma_pitch, p->src_w, p->src_h, 1, 0, lx, ly, sx, sy);
        }
        u = ff_chroma_sited(p, rx, ry, ow, oh, 0, p->resized, cw, ch);
        v = ff_chroma_sited(p, rx, ry, ow, oh, 1, p->resized, cw, ch);
        // Normalised: y in [0, 1], chroma in [-0.5, 0.5] (8-bit level units in, as the matrix's offsets say).
        int full = p->offset[0] == 0.0f;
        float yn = full ? y / 255.0f : (y - 16.0f) / 219.0f;
        float un = full ? (u - 128.0f) / 255.0f : (u - 128.0f) / 224.0f;
        float vn = full ? (v - 128.0f) / 255.0f : (v - 128.0f) / 224.0f;
        // The matrix is in 8-bit level units: its chroma columns are the coefficients times the chroma scale
        // (255 / 224 for limited range, 1 for full).
        float cs = full ? 1.0f : 255.0f / 224.0f;
        float rgb[3];
        for (int c = 0; c < 3; ++c) rgb[c] = yn + (p->matrix[3 * c + 1] * un + p->matrix[3 * c + 2] * vn) / cs;
        ff_tonemap(p, rgb);
        for (int c = 0; c < 3; ++c) {
            float level = ff_floor(rgb[c] * 65535.0f + 0.5f);
            if (p->dtype == 0) {
                // As the CPU path narrows its 16-bit SDR levels.
                level = (float)(((int)level * 255 + 32767) / 65535);
            }
            ff_store(p, c, ox, oy, level, 1);
        }
        return;
    }
    if (!p->resized) {
        y = ff_sample(p, p->luma, p->luma_pitch, rx, ry, p->src_w, p->src_h, 1, 0);
        if (p->chroma_cubic) {
            u = ff_chroma_scaled(p, rx, ry, p->src_w, p->src_h, cw, ch, 0, 0, cw, ch);
            v = ff_chroma_scaled(p, rx, ry, p->src_w, p->src_h, cw, ch, 1, 0, cw, ch);
        } else {
            u = ff_sample(p, p->chroma, p->chroma_pitch, rx / 2, ry / 2, cw, ch, 2, 0);
            v = ff_sample(p, p->chroma, p->chroma_pitch, rx / 2, ry / 2, cw, ch, 2, 1);
        }
    } else {
        float sx = (float)p->src_w / (float)p->frame_w, sy = (float)p->src_h / (float)p->frame_h;
        float lx = ((float)rx + 0.5f) * sx - 0.5f, ly = ((float)ry + 0.5f) * sy - 0.5f;
        y = ff_resample(p, p->luma, p->luma_pitch, p->src_w, p->src_h, 1, 0, lx, ly, sx, sy);
        // Chroma is resized to half the output size, as the CPU path does (it resizes the 4:2:0 planes, then
        // converts): each sample used for 2x2 output pixels (swscale's 8-bit fast path), or, for 16-bit
        // output of deeper samples (`chroma_cubic`), interpolated as swscale's scaled path does.
        int ow = (p->frame_w + 1) / 2, oh = (p->frame_h + 1) / 2;
        if (p->chroma_cubic) {
            u = ff_chroma_scaled(p, rx, ry, p->frame_w, p->frame_h, ow, oh, 0, 1, cw, ch);
            v = ff_chroma_scaled(p, rx, ry, p->frame_w, p->frame_h, ow, oh, 1, 1, cw, ch);
        } else {
            u = ff_chroma_at(p, rx / 2, ry / 2, cw, ch, 0, 1, ow, oh);
            v = ff_chroma_at(p, rx / 2, ry / 2, cw, ch, 1, 1, ow, oh);
        }
    }
    float yuv[3] = {y - p->offset[0], u - p->offset[1], v - p->offset[2]};
    // Deeper samples keep 16 bits for every type but u8 (the CPU path's RGB48).
    int deep = p->high_depth && p->dtype != 0;
    for (int c = 0; c < 3; ++c) {
        float level = p->matrix[3 * c] * yuv[0] + p->matrix[3 * c + 1] * yuv[1] + p->matrix[3 * c + 2] * yuv[2];
        // Rounded to an 8-bit (or 16-bit) level first, as the CPU path does, so that both backends cast the same
        // levels; an 8-bit level as u16 is widened exactly (times 257).
        if (deep) {
            level = ff_floor(ff_min(ff_max(level * 257.0f, 0.0f), 65535.0f) + 0.5f);
        } else {
            level = ff_floor(ff_min(ff_max(level, 0.0f), 255.0f) + 0.5f);
            if (p->dtype == 3) level *= 257.0f;
        }
        ff_store(p, c, ox, oy, level, 1);
    }
}

#ifdef __CUDA__
extern "C" __attribute__((global)) void framefeed_convert(ConvertParams p) {
    int x = (int)(__nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() + __nvvm_read_ptx_sreg_tid_x());
    int y = (int)(__nvvm_read_ptx_sreg_ctaid_y() * __nvvm_read_ptx_sreg_ntid_y() + __nvvm_read_ptx_sreg_tid_y());
    ff_convert_pixel(&p, x, y);
}
#else
// The kernel's grid, run on the CPU (tests on machines without a GPU).
extern "C" void framefeed_convert_host(const ConvertParams* p) {
    for (int y = 0; y < p->out_h; ++y)
        for (int x = 0; x < p->out_w; ++x) ff_convert_pixel(p, x, y);
}
#endif
