import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);
import {
  EventStreamCodec,
  EventStreamMarshaller,
  EventStreamMarshaller2,
  EventStreamSerde,
  HeaderMarshaller,
  Int64,
  MessageDecoderStream,
  MessageEncoderStream,
  SmithyMessageDecoderStream,
  SmithyMessageEncoderStream,
  eventStreamSerdeProvider,
  eventStreamSerdeProvider2,
  getChunkedStream,
  getMessageUnmarshaller,
  getUnmarshalledStream,
  init_event_streams,
  iterableToReadableStream,
  readableStreamToIterable,
  resolveEventStreamSerdeConfig
} from "./chunk-7BHEFNLD.js";
import "./chunk-ANXZA7FK.js";
init_event_streams();
export {
  EventStreamCodec,
  EventStreamMarshaller2 as EventStreamMarshaller,
  EventStreamSerde,
  HeaderMarshaller,
  Int64,
  MessageDecoderStream,
  MessageEncoderStream,
  SmithyMessageDecoderStream,
  SmithyMessageEncoderStream,
  EventStreamMarshaller as UniversalEventStreamMarshaller,
  eventStreamSerdeProvider2 as eventStreamSerdeProvider,
  getChunkedStream,
  getMessageUnmarshaller,
  getUnmarshalledStream,
  iterableToReadableStream,
  readableStreamToIterable,
  resolveEventStreamSerdeConfig,
  eventStreamSerdeProvider as universalEventStreamSerdeProvider
};
