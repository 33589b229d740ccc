# The parts of ffmpeg Tandem uses, for the wasm modules (wasm/build.sh) and the native fuzz build
# (wasm/fuzz/build.sh), which must decode with the same components.
FFMPEG_CONFIG_TAIL=(
  --enable-zlib
  --enable-decoder=mjpeg,png,webp,bmp,gif,h264,vp8,vp9,mp3,mp3float,aac,pcm_s16le,pcm_s24le,pcm_f32le,pcm_u8,flac,opus,vorbis
  --enable-demuxer=mov,matroska,mp3,aac,wav,flac,ogg
  --enable-parser=h264,vp8,vp9,mjpeg,aac,mpegaudio,flac,opus,vorbis
  --enable-bsf=h264_mp4toannexb,vp9_superframe_split
)
