// H3 Studio's AVFoundation/ImageIO shim: the C functions and AV*Key
// constants darwinkit v0.5.0 does not bind. Built only on darwin; compiled
// with ARC. Written against Apple's documentation; not yet run on a Mac.
#import <AVFoundation/AVFoundation.h>
#import <CoreMedia/CoreMedia.h>
#import <CoreVideo/CoreVideo.h>
#import <ImageIO/ImageIO.h>
#import <CoreGraphics/CoreGraphics.h>
#include <stdlib.h>
#include <string.h>

#include "shim_darwin.h"

// autoreleased hands an ARC-owned object to C as an autoreleased pointer.
// `return (__bridge void *)d` would not: ARC releases d at the end of its
// scope, and when the literal's constructor skipped the autorelease pool
// (objc_retainAutoreleasedReturnValue), the caller gets a freed object.
static void *autoreleased(id obj) {
	return (void *)CFAutorelease((__bridge_retained CFTypeRef)obj);
}

void *h3_video_settings(int width, int height, int bitRate) {
	NSDictionary *d = @{
		AVVideoCodecKey: AVVideoCodecTypeH264,
		AVVideoWidthKey: @(width),
		AVVideoHeightKey: @(height),
		AVVideoCompressionPropertiesKey: @{
			AVVideoAverageBitRateKey: @(bitRate),
			AVVideoProfileLevelKey: AVVideoProfileLevelH264HighAutoLevel,
			AVVideoExpectedSourceFrameRateKey: @24,
			AVVideoMaxKeyFrameIntervalKey: @48,
			AVVideoAllowFrameReorderingKey: @YES,
		},
		AVVideoColorPropertiesKey: @{
			AVVideoColorPrimariesKey: AVVideoColorPrimaries_ITU_R_709_2,
			AVVideoTransferFunctionKey: AVVideoTransferFunction_ITU_R_709_2,
			AVVideoYCbCrMatrixKey: AVVideoYCbCrMatrix_ITU_R_709_2,
		},
	};
	return autoreleased(d);
}

void *h3_pixel_buffer_attributes(int width, int height) {
	NSDictionary *d = @{
		(__bridge NSString *)kCVPixelBufferPixelFormatTypeKey: @(kCVPixelFormatType_32BGRA),
		(__bridge NSString *)kCVPixelBufferWidthKey: @(width),
		(__bridge NSString *)kCVPixelBufferHeightKey: @(height),
		(__bridge NSString *)kCVPixelBufferIOSurfacePropertiesKey: @{},
	};
	return autoreleased(d);
}

void *h3_audio_settings(int rate, int channels, int bitRate) {
	AudioChannelLayout layout = {0};
	layout.mChannelLayoutTag = channels == 1 ? kAudioChannelLayoutTag_Mono : kAudioChannelLayoutTag_Stereo;
	NSDictionary *d = @{
		AVFormatIDKey: @(kAudioFormatMPEG4AAC),
		AVSampleRateKey: @(rate),
		AVNumberOfChannelsKey: @(channels),
		AVEncoderBitRateKey: @(bitRate),
		AVChannelLayoutKey: [NSData dataWithBytes:&layout length:sizeof(layout)],
	};
	return autoreleased(d);
}

void *h3_video_reader_settings(void) {
	NSDictionary *d = @{(__bridge NSString *)kCVPixelBufferPixelFormatTypeKey: @(kCVPixelFormatType_32BGRA)};
	return autoreleased(d);
}

void *h3_audio_reader_settings(void) {
	// Native rate and channel count; float32 interleaved.
	NSDictionary *d = @{
		AVFormatIDKey: @(kAudioFormatLinearPCM),
		AVLinearPCMBitDepthKey: @32,
		AVLinearPCMIsFloatKey: @YES,
		AVLinearPCMIsBigEndianKey: @NO,
		AVLinearPCMIsNonInterleaved: @NO,
	};
	return autoreleased(d);
}

void *h3_pixel_buffer(void *pool, const uint8_t *rgba, int width, int height, int stride) {
	CVPixelBufferRef pb = NULL;
	if (!pool || CVPixelBufferPoolCreatePixelBuffer(kCFAllocatorDefault, (CVPixelBufferPoolRef)pool, &pb) != kCVReturnSuccess || !pb)
		return NULL;
	if (CVPixelBufferLockBaseAddress(pb, 0) != kCVReturnSuccess) {
		CVPixelBufferRelease(pb);
		return NULL;
	}
	uint8_t *base = CVPixelBufferGetBaseAddress(pb);
	size_t bpr = CVPixelBufferGetBytesPerRow(pb);
	size_t w = CVPixelBufferGetWidth(pb), h = CVPixelBufferGetHeight(pb);
	if (w != (size_t)width || h != (size_t)height) {
		CVPixelBufferUnlockBaseAddress(pb, 0);
		CVPixelBufferRelease(pb);
		return NULL;
	}
	for (int y = 0; y < height; y++) {
		const uint8_t *s = rgba + (size_t)y * stride;
		uint8_t *d = base + (size_t)y * bpr;
		for (int x = 0; x < width; x++, s += 4, d += 4) {
			d[0] = s[2]; d[1] = s[1]; d[2] = s[0]; d[3] = 255; // RGBA → BGRA
		}
	}
	CVPixelBufferUnlockBaseAddress(pb, 0);
	CVBufferSetAttachment(pb, kCVImageBufferColorPrimariesKey, kCVImageBufferColorPrimaries_ITU_R_709_2, kCVAttachmentMode_ShouldPropagate);
	CVBufferSetAttachment(pb, kCVImageBufferTransferFunctionKey, kCVImageBufferTransferFunction_ITU_R_709_2, kCVAttachmentMode_ShouldPropagate);
	CVBufferSetAttachment(pb, kCVImageBufferYCbCrMatrixKey, kCVImageBufferYCbCrMatrix_ITU_R_709_2, kCVAttachmentMode_ShouldPropagate);
	return pb;
}

void *h3_audio_sample(const float *pcm, int frames, int channels, int rate, int64_t start) {
	AudioStreamBasicDescription asbd = {0};
	asbd.mSampleRate = rate;
	asbd.mFormatID = kAudioFormatLinearPCM;
	asbd.mFormatFlags = kAudioFormatFlagIsFloat | kAudioFormatFlagIsPacked;
	asbd.mBytesPerPacket = asbd.mBytesPerFrame = 4 * channels;
	asbd.mFramesPerPacket = 1;
	asbd.mChannelsPerFrame = channels;
	asbd.mBitsPerChannel = 32;
	CMAudioFormatDescriptionRef fmt = NULL;
	if (CMAudioFormatDescriptionCreate(kCFAllocatorDefault, &asbd, 0, NULL, 0, NULL, NULL, &fmt) != noErr)
		return NULL;
	size_t bytes = (size_t)frames * channels * 4;
	CMBlockBufferRef block = NULL;
	OSStatus st = CMBlockBufferCreateWithMemoryBlock(kCFAllocatorDefault, NULL, bytes, kCFAllocatorDefault, NULL, 0, bytes,
		kCMBlockBufferAssureMemoryNowFlag, &block);
	if (st == noErr)
		st = CMBlockBufferReplaceDataBytes(pcm, block, 0, bytes);
	CMSampleBufferRef sb = NULL;
	if (st == noErr)
		st = CMAudioSampleBufferCreateReadyWithPacketDescriptions(kCFAllocatorDefault, block, fmt, frames,
			CMTimeMake(start, rate), NULL, &sb);
	if (block) CFRelease(block);
	CFRelease(fmt);
	return st == noErr ? sb : NULL;
}

void h3_release(void *cf) {
	if (cf) CFRelease((CFTypeRef)cf);
}

int h3_image_size(void *sample, int *width, int *height) {
	CVImageBufferRef ib = CMSampleBufferGetImageBuffer((CMSampleBufferRef)sample);
	if (!ib) return 0;
	*width = (int)CVPixelBufferGetWidth(ib);
	*height = (int)CVPixelBufferGetHeight(ib);
	return 1;
}

int h3_copy_rgba(void *sample, uint8_t *rgba, int width, int height) {
	CVImageBufferRef ib = CMSampleBufferGetImageBuffer((CMSampleBufferRef)sample);
	if (!ib || CVPixelBufferGetPixelFormatType(ib) != kCVPixelFormatType_32BGRA ||
	    (int)CVPixelBufferGetWidth(ib) != width || (int)CVPixelBufferGetHeight(ib) != height)
		return 0;
	if (CVPixelBufferLockBaseAddress(ib, kCVPixelBufferLock_ReadOnly) != kCVReturnSuccess) return 0;
	const uint8_t *base = CVPixelBufferGetBaseAddress(ib);
	size_t bpr = CVPixelBufferGetBytesPerRow(ib);
	for (int y = 0; y < height; y++) {
		const uint8_t *s = base + (size_t)y * bpr;
		uint8_t *d = rgba + (size_t)y * width * 4;
		for (int x = 0; x < width; x++, s += 4, d += 4) {
			d[0] = s[2]; d[1] = s[1]; d[2] = s[0]; d[3] = 255; // BGRA → opaque RGBA
		}
	}
	CVPixelBufferUnlockBaseAddress(ib, kCVPixelBufferLock_ReadOnly);
	return 1;
}

long h3_copy_pcm(void *sample, float *dst, long maxFloats) {
	CMBlockBufferRef block = CMSampleBufferGetDataBuffer((CMSampleBufferRef)sample);
	if (!block) return 0;
	size_t n = CMBlockBufferGetDataLength(block) / 4;
	if ((long)n > maxFloats) n = (size_t)maxFloats;
	if (CMBlockBufferCopyDataBytes(block, 0, n * 4, dst) != kCMBlockBufferNoErr) return -1;
	return (long)n;
}

void *h3_sample_format(void *sample) {
	return (void *)CMSampleBufferGetFormatDescription((CMSampleBufferRef)sample);
}

int h3_audio_format(void *formatDescription, int *rate, int *channels) {
	const AudioStreamBasicDescription *d =
		CMAudioFormatDescriptionGetStreamBasicDescription((CMAudioFormatDescriptionRef)formatDescription);
	if (!d) return 0;
	*rate = (int)d->mSampleRate;
	*channels = (int)d->mChannelsPerFrame;
	return 1;
}

int h3_image_info(const char *path, int *width, int *height, int *orientation) {
	NSURL *url = [NSURL fileURLWithPath:[NSString stringWithUTF8String:path]];
	CGImageSourceRef src = CGImageSourceCreateWithURL((__bridge CFURLRef)url, NULL);
	if (!src) return 0;
	int ok = 0;
	if (CGImageSourceGetCount(src) > 0) {
		NSDictionary *p = (__bridge_transfer NSDictionary *)CGImageSourceCopyPropertiesAtIndex(src, 0, NULL);
		NSNumber *w = p[(__bridge NSString *)kCGImagePropertyPixelWidth];
		NSNumber *h = p[(__bridge NSString *)kCGImagePropertyPixelHeight];
		NSNumber *o = p[(__bridge NSString *)kCGImagePropertyOrientation];
		if (w && h) {
			*width = w.intValue;
			*height = h.intValue;
			*orientation = o ? o.intValue : 1;
			ok = 1;
		}
	}
	CFRelease(src);
	return ok;
}

// h3_image_decode draws the first picture, EXIF orientation applied by
// ImageIO, into width×height RGBA (sRGB), un-premultiplied and made opaque
// (alpha dropped without compositing, like PIL's convert("RGB")).
int h3_image_decode(const char *path, uint8_t *rgba, int width, int height) {
	NSURL *url = [NSURL fileURLWithPath:[NSString stringWithUTF8String:path]];
	CGImageSourceRef src = CGImageSourceCreateWithURL((__bridge CFURLRef)url, NULL);
	if (!src) return 0;
	NSDictionary *opts = @{
		(__bridge NSString *)kCGImageSourceCreateThumbnailFromImageAlways: @YES,
		(__bridge NSString *)kCGImageSourceCreateThumbnailWithTransform: @YES,
		(__bridge NSString *)kCGImageSourceThumbnailMaxPixelSize: @(MAX(width, height)),
		(__bridge NSString *)kCGImageSourceShouldCacheImmediately: @YES,
	};
	CGImageRef img = CGImageSourceCreateThumbnailAtIndex(src, 0, (__bridge CFDictionaryRef)opts);
	CFRelease(src);
	if (!img) return 0;
	int ok = 0;
	if ((int)CGImageGetWidth(img) == width && (int)CGImageGetHeight(img) == height) {
		CGColorSpaceRef cs = CGColorSpaceCreateWithName(kCGColorSpaceSRGB);
		CGContextRef ctx = CGBitmapContextCreate(rgba, width, height, 8, (size_t)width * 4, cs,
			kCGImageAlphaPremultipliedLast | kCGBitmapByteOrder32Big);
		if (ctx) {
			CGContextSetBlendMode(ctx, kCGBlendModeCopy);
			CGContextDrawImage(ctx, CGRectMake(0, 0, width, height), img);
			CGContextRelease(ctx);
			size_t n = (size_t)width * height;
			for (size_t i = 0; i < n; i++) {
				uint8_t *p = rgba + 4 * i;
				unsigned a = p[3];
				if (a && a < 255)
					for (int c = 0; c < 3; c++) p[c] = (uint8_t)((p[c] * 255u + a / 2) / a);
				p[3] = 255;
			}
			ok = 1;
		}
		CGColorSpaceRelease(cs);
	}
	CGImageRelease(img);
	return ok;
}

double h3_sample_time(void *sample) {
	return CMTimeGetSeconds(CMSampleBufferGetPresentationTimeStamp((CMSampleBufferRef)sample));
}

// exceptionText is an exception's name and reason as a malloc'd C string.
static char *exceptionText(NSException *e) {
	NSString *s = [NSString stringWithFormat:@"%@: %@", e.name, e.reason];
	return strdup(s.UTF8String);
}

static NSString *mediaTypeOf(const char *mediaType) {
	return [NSString stringWithUTF8String:mediaType];
}

char *h3_writer_input(const char *mediaType, void *settings, void *formatHint, void **out) {
	*out = NULL;
	@try {
		AVAssetWriterInput *in = [[AVAssetWriterInput alloc] initWithMediaType:mediaTypeOf(mediaType)
			outputSettings:(__bridge NSDictionary *)settings
			sourceFormatHint:(CMFormatDescriptionRef)formatHint];
		*out = (__bridge_retained void *)in;
		return NULL;
	} @catch (NSException *e) {
		return exceptionText(e);
	}
}

char *h3_pixel_adaptor(void *input, void *attributes, void **out) {
	*out = NULL;
	@try {
		AVAssetWriterInputPixelBufferAdaptor *ad = [[AVAssetWriterInputPixelBufferAdaptor alloc]
			initWithAssetWriterInput:(__bridge AVAssetWriterInput *)input
			sourcePixelBufferAttributes:(__bridge NSDictionary *)attributes];
		*out = (__bridge_retained void *)ad;
		return NULL;
	} @catch (NSException *e) {
		return exceptionText(e);
	}
}

char *h3_writer_add_input(void *writer, void *input) {
	@try {
		[(__bridge AVAssetWriter *)writer addInput:(__bridge AVAssetWriterInput *)input];
		return NULL;
	} @catch (NSException *e) {
		return exceptionText(e);
	}
}

char *h3_writer_start_session(void *writer, int64_t value, int32_t timescale) {
	@try {
		[(__bridge AVAssetWriter *)writer startSessionAtSourceTime:CMTimeMake(value, timescale)];
		return NULL;
	} @catch (NSException *e) {
		return exceptionText(e);
	}
}

char *h3_append_pixel_buffer(void *adaptor, void *pixelBuffer, int64_t value, int32_t timescale, int *ok) {
	*ok = 0;
	@try {
		*ok = [(__bridge AVAssetWriterInputPixelBufferAdaptor *)adaptor appendPixelBuffer:(CVPixelBufferRef)pixelBuffer
			withPresentationTime:CMTimeMake(value, timescale)] ? 1 : 0;
		return NULL;
	} @catch (NSException *e) {
		return exceptionText(e);
	}
}

char *h3_append_sample(void *input, void *sample, int *ok) {
	*ok = 0;
	@try {
		*ok = [(__bridge AVAssetWriterInput *)input appendSampleBuffer:(CMSampleBufferRef)sample] ? 1 : 0;
		return NULL;
	} @catch (NSException *e) {
		return exceptionText(e);
	}
}

char *h3_reader_output(void *track, void *settings, void **out) {
	*out = NULL;
	@try {
		AVAssetReaderTrackOutput *o = [[AVAssetReaderTrackOutput alloc] initWithTrack:(__bridge AVAssetTrack *)track
			outputSettings:(__bridge NSDictionary *)settings];
		*out = (__bridge_retained void *)o;
		return NULL;
	} @catch (NSException *e) {
		return exceptionText(e);
	}
}

char *h3_reader_add_output(void *reader, void *output) {
	@try {
		[(__bridge AVAssetReader *)reader addOutput:(__bridge AVAssetReaderOutput *)output];
		return NULL;
	} @catch (NSException *e) {
		return exceptionText(e);
	}
}

int h3_can_apply(void *writer, void *settings, const char *mediaType) {
	return [(__bridge AVAssetWriter *)writer canApplyOutputSettings:(__bridge NSDictionary *)settings
		forMediaType:mediaTypeOf(mediaType)] ? 1 : 0;
}
