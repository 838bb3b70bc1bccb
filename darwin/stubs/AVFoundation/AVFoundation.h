// Stub (see ../README.md): the AVFoundation classes and settings keys the
// shims use.
#pragma once
#include <CoreMedia/CoreMedia.h>
#include <CoreVideo/CoreVideo.h>
#include <Foundation/Foundation.h>

typedef NSString *AVMediaType;
typedef NSString *AVVideoCodecType;

extern NSString *const AVVideoCodecKey;
extern AVVideoCodecType const AVVideoCodecTypeH264;
extern NSString *const AVVideoWidthKey;
extern NSString *const AVVideoHeightKey;
extern NSString *const AVVideoCompressionPropertiesKey;
extern NSString *const AVVideoAverageBitRateKey;
extern NSString *const AVVideoProfileLevelKey;
extern NSString *const AVVideoProfileLevelH264HighAutoLevel;
extern NSString *const AVVideoExpectedSourceFrameRateKey;
extern NSString *const AVVideoMaxKeyFrameIntervalKey;
extern NSString *const AVVideoAllowFrameReorderingKey;
extern NSString *const AVVideoColorPropertiesKey;
extern NSString *const AVVideoColorPrimariesKey;
extern NSString *const AVVideoColorPrimaries_ITU_R_709_2;
extern NSString *const AVVideoTransferFunctionKey;
extern NSString *const AVVideoTransferFunction_ITU_R_709_2;
extern NSString *const AVVideoYCbCrMatrixKey;
extern NSString *const AVVideoYCbCrMatrix_ITU_R_709_2;
extern NSString *const AVFormatIDKey;
extern NSString *const AVSampleRateKey;
extern NSString *const AVNumberOfChannelsKey;
extern NSString *const AVEncoderBitRateKey;
extern NSString *const AVChannelLayoutKey;
extern NSString *const AVLinearPCMBitDepthKey;
extern NSString *const AVLinearPCMIsFloatKey;
extern NSString *const AVLinearPCMIsBigEndianKey;
extern NSString *const AVLinearPCMIsNonInterleaved;

@interface AVAssetTrack : NSObject
@end

@interface AVAssetWriterInput : NSObject
- (instancetype)initWithMediaType:(AVMediaType)mediaType
                   outputSettings:(NSDictionary<NSString *, id> *)outputSettings
                 sourceFormatHint:(CMFormatDescriptionRef)sourceFormatHint;
- (BOOL)appendSampleBuffer:(CMSampleBufferRef)sampleBuffer;
@end

@interface AVAssetWriterInputPixelBufferAdaptor : NSObject
- (instancetype)initWithAssetWriterInput:(AVAssetWriterInput *)input
             sourcePixelBufferAttributes:(NSDictionary<NSString *, id> *)sourcePixelBufferAttributes;
- (BOOL)appendPixelBuffer:(CVPixelBufferRef)pixelBuffer withPresentationTime:(CMTime)presentationTime;
@end

@interface AVAssetWriter : NSObject
- (BOOL)canApplyOutputSettings:(NSDictionary<NSString *, id> *)outputSettings forMediaType:(AVMediaType)mediaType;
- (void)addInput:(AVAssetWriterInput *)input;
- (void)startSessionAtSourceTime:(CMTime)startTime;
@end

@interface AVAssetReaderOutput : NSObject
@end

@interface AVAssetReaderTrackOutput : AVAssetReaderOutput
- (instancetype)initWithTrack:(AVAssetTrack *)track outputSettings:(NSDictionary<NSString *, id> *)outputSettings;
@end

@interface AVAssetReader : NSObject
- (void)addOutput:(AVAssetReaderOutput *)output;
@end
