// Jest setupFilesAfterEach: after each test file, every status its apps answered must be documented (statuses.ts).
import { undocumentedStatuses } from './statuses';

afterAll(() => {
  const undocumented = undocumentedStatuses();
  if (undocumented.length > 0)
    throw new Error(
      `statuses openapi.yaml does not document for their operation: ${undocumented.join('; ')}`,
    );
});
