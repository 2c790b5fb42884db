/** The uploads bench's requests, shared by its timing process and its burst process. */
const BOUNDARY = "BenchUpload";

/** A multipart body of one file part, field `file`. */
export const multipartFile = (name: string, content: Buffer) =>
  Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n\r\n`,
    ),
    content,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);

/** Posts `body` (from multipartFile) to the form's intake; resolves to the status, body read. */
export const postUpload = (origin: string, formId: string, body: Buffer) =>
  fetch(`${origin}/f/${formId}`, {
    method: "POST",
    headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    body,
  }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });
