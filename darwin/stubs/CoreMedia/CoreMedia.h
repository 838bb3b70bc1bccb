// Stub (see ../README.md): the CoreMedia and CoreAudio types and functions the shims use.
#pragma once
#include <CoreFoundation/CoreFoundation.h>
#include <CoreVideo/CoreVideo.h>

typedef uint32_t AudioFormatID;
typedef uint32_t AudioFormatFlags;
typedef uint32_t AudioChannelLayoutTag;
typedef uint32_t AudioChannelLabel;
typedef uint32_t AudioChannelFlags;
typedef uint32_t AudioChannelBitmap;
enum { kAudioFormatLinearPCM = 'lpcm', kAudioFormatMPEG4AAC = 'aac ' };
enum { kAudioFormatFlagIsFloat = (1U << 0), kAudioFormatFlagIsPacked = (1U << 3) };
enum { kAudioChannelLayoutTag_Mono = (100U << 16) | 1, kAudioChannelLayoutTag_Stereo = (101U << 16) | 2 };

typedef struct AudioStreamBasicDescription {
	Float64 mSampleRate;
	AudioFormatID mFormatID;
	AudioFormatFlags mFormatFlags;
	UInt32 mBytesPerPacket;
	UInt32 mFramesPerPacket;
	UInt32 mBytesPerFrame;
	UInt32 mChannelsPerFrame;
	UInt32 mBitsPerChannel;
	UInt32 mReserved;
} AudioStreamBasicDescription;

typedef struct AudioChannelDescription {
	AudioChannelLabel mChannelLabel;
	AudioChannelFlags mChannelFlags;
	float mCoordinates[3];
} AudioChannelDescription;

typedef struct AudioChannelLayout {
	AudioChannelLayoutTag mChannelLayoutTag;
	AudioChannelBitmap mChannelBitmap;
	UInt32 mNumberChannelDescriptions;
	AudioChannelDescription mChannelDescriptions[1];
} AudioChannelLayout;

typedef struct AudioStreamPacketDescription {
	int64_t mStartOffset;
	UInt32 mVariableFramesInPacket;
	UInt32 mDataByteSize;
} AudioStreamPacketDescription;

typedef int64_t CMTimeValue;
typedef int32_t CMTimeScale;
typedef uint32_t CMTimeFlags;
typedef int64_t CMTimeEpoch;
typedef struct {
	CMTimeValue value;
	CMTimeScale timescale;
	CMTimeFlags flags;
	CMTimeEpoch epoch;
} CMTime;
CMTime CMTimeMake(int64_t value, int32_t timescale);
Float64 CMTimeGetSeconds(CMTime time);

typedef CFIndex CMItemCount;
typedef uint32_t CMBlockBufferFlags;
enum { kCMBlockBufferAssureMemoryNowFlag = (1L << 0) };
enum { kCMBlockBufferNoErr = 0 };
typedef struct CF_BRIDGED_TYPE(id) OpaqueCMBlockBuffer *CMBlockBufferRef;
typedef struct CF_BRIDGED_TYPE(id) opaqueCMSampleBuffer *CMSampleBufferRef;
typedef const struct CF_BRIDGED_TYPE(id) opaqueCMFormatDescription *CMFormatDescriptionRef;
typedef CMFormatDescriptionRef CMAudioFormatDescriptionRef;
typedef struct {
	uint32_t version;
	void *(*AllocateBlock)(void *refCon, size_t sizeInBytes);
	void (*FreeBlock)(void *refCon, void *doomedMemoryBlock, size_t sizeInBytes);
	void *refCon;
} CMBlockBufferCustomBlockSource;

OSStatus CMAudioFormatDescriptionCreate(CFAllocatorRef allocator, const AudioStreamBasicDescription *asbd,
                                        size_t layoutSize, const AudioChannelLayout *layout, size_t magicCookieSize,
                                        const void *magicCookie, CFDictionaryRef extensions,
                                        CF_RETURNS_RETAINED CMAudioFormatDescriptionRef *formatDescriptionOut);
OSStatus CMBlockBufferCreateWithMemoryBlock(CFAllocatorRef structureAllocator, void *memoryBlock, size_t blockLength,
                                            CFAllocatorRef blockAllocator,
                                            const CMBlockBufferCustomBlockSource *customBlockSource,
                                            size_t offsetToData, size_t dataLength, CMBlockBufferFlags flags,
                                            CF_RETURNS_RETAINED CMBlockBufferRef *blockBufferOut);
OSStatus CMBlockBufferReplaceDataBytes(const void *sourceBytes, CMBlockBufferRef destinationBuffer,
                                       size_t offsetIntoDestination, size_t dataLength);
size_t CMBlockBufferGetDataLength(CMBlockBufferRef theBuffer);
OSStatus CMBlockBufferCopyDataBytes(CMBlockBufferRef theSourceBuffer, size_t offsetToData, size_t dataLength,
                                    void *destination);
OSStatus CMAudioSampleBufferCreateReadyWithPacketDescriptions(
    CFAllocatorRef allocator, CMBlockBufferRef dataBuffer, CMFormatDescriptionRef formatDescription,
    CMItemCount numSamples, CMTime presentationTimeStamp, const AudioStreamPacketDescription *packetDescriptions,
    CF_RETURNS_RETAINED CMSampleBufferRef *sampleBufferOut);
CVImageBufferRef CMSampleBufferGetImageBuffer(CMSampleBufferRef sbuf);
CMBlockBufferRef CMSampleBufferGetDataBuffer(CMSampleBufferRef sbuf);
CMFormatDescriptionRef CMSampleBufferGetFormatDescription(CMSampleBufferRef sbuf);
CMTime CMSampleBufferGetPresentationTimeStamp(CMSampleBufferRef sbuf);
const AudioStreamBasicDescription *CMAudioFormatDescriptionGetStreamBasicDescription(CMAudioFormatDescriptionRef desc);
