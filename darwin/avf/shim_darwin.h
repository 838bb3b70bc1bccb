// C entry points of H3 Studio's AVFoundation shim (shim_darwin.m): the C
// functions and constants darwinkit v0.5.0 does not bind. Objects cross as
// void*; functions that return an object say whether it is retained.
#include <stdint.h>

// Settings dictionaries (autoreleased; the caller holds an autorelease pool).
void *h3_video_settings(int width, int height, int bitRate);
void *h3_pixel_buffer_attributes(int width, int height);
void *h3_audio_settings(int rate, int channels, int bitRate);
void *h3_video_reader_settings(void);
void *h3_audio_reader_settings(void);

// Writing. h3_pixel_buffer returns a retained CVPixelBufferRef filled from
// RGBA rows and tagged BT.709, or NULL. h3_audio_sample returns a retained
// CMSampleBufferRef of interleaved float32 PCM starting at sample `start`.
void *h3_pixel_buffer(void *pool, const uint8_t *rgba, int width, int height, int stride);
void *h3_audio_sample(const float *pcm, int frames, int channels, int rate, int64_t start);
void h3_release(void *cf);

// Reading sample buffers.
int h3_image_size(void *sample, int *width, int *height);
int h3_copy_rgba(void *sample, uint8_t *rgba, int width, int height);
long h3_copy_pcm(void *sample, float *dst, long maxFloats);
int h3_audio_format(void *formatDescription, int *rate, int *channels);
void *h3_sample_format(void *sample);

// ImageIO.
int h3_image_info(const char *path, int *width, int *height, int *orientation);
int h3_image_decode(const char *path, uint8_t *rgba, int width, int height);
double h3_sample_time(void *sample);
