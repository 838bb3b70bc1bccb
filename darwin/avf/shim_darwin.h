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

// Messages that raise an Objective-C exception instead of returning an error
// (invalid settings, a writer in the wrong state, an input not ready): each
// runs inside @try and returns NULL, or the exception's name and reason as a
// malloc'd string the caller frees. Objects come back retained through out.
char *h3_writer_input(const char *mediaType, void *settings, void *formatHint, void **out);
char *h3_pixel_adaptor(void *input, void *attributes, void **out);
char *h3_writer_add_input(void *writer, void *input);
char *h3_writer_start_session(void *writer, int64_t value, int32_t timescale);
char *h3_append_pixel_buffer(void *adaptor, void *pixelBuffer, int64_t value, int32_t timescale, int *ok);
char *h3_append_sample(void *input, void *sample, int *ok);
char *h3_reader_output(void *track, void *settings, void **out);
char *h3_reader_add_output(void *reader, void *output);

// h3_can_apply reports whether writer accepts settings for mediaType
// (canApplyOutputSettings:forMediaType:), so that invalid settings never
// reach an initialiser that raises.
int h3_can_apply(void *writer, void *settings, const char *mediaType);
