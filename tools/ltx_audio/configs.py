"""Checkpoint configs: LTX-2.3 / LTX-2 (the `config` JSON carried in the safetensors header,
ltx2_audio_decode.md §3) and NVIDIA BigVGAN's released config.json files (bigvgan.md §7), plus
reduced-width ("small") variants with the same structure for test fixtures."""
import copy

_DIL = [[1, 3, 5], [1, 3, 5], [1, 3, 5]]

AUDIO_VAE = {
    'model': {'params': {
        'sampling_rate': 16000, 'embed_dim': 8,
        'ddconfig': {
            'double_z': True, 'mel_bins': 64, 'z_channels': 8, 'resolution': 256, 'downsample_time': False,
            'in_channels': 2, 'out_ch': 2, 'ch': 128, 'ch_mult': [1, 2, 4], 'num_res_blocks': 2,
            'attn_resolutions': [], 'dropout': 0.0, 'mid_block_add_attention': False, 'norm_type': 'pixel',
            'causality_axis': 'height'}}},
    'preprocessing': {
        'audio': {'sampling_rate': 16000, 'max_wav_value': 32768.0, 'duration': 5.12, 'stereo': True,
                  'causal_padding': 3},
        'stft': {'filter_length': 1024, 'hop_length': 160, 'win_length': 1024, 'causal': True},
        'mel': {'n_mel_channels': 64, 'mel_fmin': 0, 'mel_fmax': 8000}},
}

LTX23_VOCODER = {
    'vocoder': {
        'upsample_initial_channel': 1536, 'resblock': 'AMP1', 'upsample_rates': [5, 2, 2, 2, 2, 2],
        'resblock_kernel_sizes': [3, 7, 11], 'upsample_kernel_sizes': [11, 4, 4, 4, 4, 4],
        'resblock_dilation_sizes': _DIL, 'stereo': True, 'use_tanh_at_final': False,
        'activation': 'snakebeta', 'use_bias_at_final': False},
    'bwe': {
        'upsample_initial_channel': 512, 'resblock': 'AMP1', 'upsample_rates': [6, 5, 2, 2, 2],
        'resblock_kernel_sizes': [3, 7, 11], 'upsample_kernel_sizes': [12, 11, 4, 4, 4],
        'resblock_dilation_sizes': _DIL, 'stereo': True, 'use_tanh_at_final': False,
        'activation': 'snakebeta', 'use_bias_at_final': False, 'apply_final_activation': False,
        'input_sampling_rate': 16000, 'output_sampling_rate': 48000, 'hop_length': 80, 'n_fft': 512,
        'win_size': 512, 'num_mels': 64},
}

LTX2_VOCODER = {  # 19B, flat; output_sampling_rate / use_tanh_at_final / use_bias_at_final absent
    'resblock': '1', 'upsample_rates': [6, 5, 2, 2, 2], 'upsample_kernel_sizes': [16, 15, 8, 4, 4],
    'upsample_initial_channel': 1024, 'resblock_kernel_sizes': [3, 7, 11], 'resblock_dilation_sizes': _DIL,
    'stereo': True,
}


def ltx23_config(small=False):
    cfg = {'audio_vae': copy.deepcopy(AUDIO_VAE), 'vocoder': copy.deepcopy(LTX23_VOCODER)}
    if small:
        cfg['audio_vae']['model']['params']['ddconfig']['ch'] = 4          # levels 16 / 8 / 4 channels
        cfg['vocoder']['vocoder']['upsample_initial_channel'] = 64         # 32 … 1 channels
        cfg['vocoder']['bwe']['upsample_initial_channel'] = 32             # 16 … 1 channels
        cfg['vocoder']['bwe']['n_fft'] = cfg['vocoder']['bwe']['win_size'] = 128  # 65 STFT bins
    return cfg


def ltx2_config(small=False):
    cfg = {'audio_vae': copy.deepcopy(AUDIO_VAE), 'vocoder': copy.deepcopy(LTX2_VOCODER)}
    if small:
        cfg['audio_vae']['model']['params']['ddconfig']['ch'] = 4
        cfg['vocoder']['upsample_initial_channel'] = 32                    # 16 … 1 channels
    return cfg


# --- NVIDIA BigVGAN released configs (generator + mel front-end fields) --------------------------

def _bv(sr, mels, nfft, hop, fmax, rates, kernels, c0, v2):
    c = {'resblock': '1', 'upsample_rates': rates, 'upsample_kernel_sizes': kernels,
         'upsample_initial_channel': c0, 'resblock_kernel_sizes': [3, 7, 11], 'resblock_dilation_sizes': _DIL,
         'activation': 'snakebeta', 'snake_logscale': True, 'num_mels': mels, 'n_fft': nfft,
         'hop_size': hop, 'win_size': nfft, 'sampling_rate': sr, 'fmin': 0, 'fmax': fmax}
    if v2:
        c.update({'use_tanh_at_final': False, 'use_bias_at_final': False, 'use_cqtd_instead_of_mrd': True})
    return c


BIGVGAN_CONFIGS = {
    'bigvgan_v2_24khz_100band_256x': _bv(24000, 100, 1024, 256, None, [4, 4, 2, 2, 2, 2], [8, 8, 4, 4, 4, 4], 1536, True),
    'bigvgan_v2_44khz_128band_512x': _bv(44100, 128, 2048, 512, None, [8, 4, 2, 2, 2, 2], [16, 8, 4, 4, 4, 4], 1536, True),
    'bigvgan_v2_44khz_128band_256x': _bv(44100, 128, 1024, 256, None, [4, 4, 2, 2, 2, 2], [8, 8, 4, 4, 4, 4], 1536, True),
    'bigvgan_v2_22khz_80band_256x': _bv(22050, 80, 1024, 256, None, [4, 4, 2, 2, 2, 2], [8, 8, 4, 4, 4, 4], 1536, True),
    'bigvgan_v2_22khz_80band_fmax8k_256x': _bv(22050, 80, 1024, 256, 8000, [4, 4, 2, 2, 2, 2], [8, 8, 4, 4, 4, 4], 1536, True),
    'bigvgan_22khz_80band': _bv(22050, 80, 1024, 256, 8000, [4, 4, 2, 2, 2, 2], [8, 8, 4, 4, 4, 4], 1536, False),
    'bigvgan_24khz_100band': _bv(24000, 100, 1024, 256, 12000, [4, 4, 2, 2, 2, 2], [8, 8, 4, 4, 4, 4], 1536, False),
    'bigvgan_base_22khz_80band': _bv(22050, 80, 1024, 256, 8000, [8, 8, 2, 2], [16, 16, 4, 4], 512, False),
    'bigvgan_base_24khz_100band': _bv(24000, 100, 1024, 256, 12000, [8, 8, 2, 2], [16, 16, 4, 4], 512, False),
}


def bigvgan_config(name, small=False):
    c = copy.deepcopy(BIGVGAN_CONFIGS[name])
    if small:
        c['upsample_initial_channel'] = 2 ** len(c['upsample_rates'])  # last stage has 1 channel
    return c
