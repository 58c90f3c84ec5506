package activities

// TaskQueue is the Temporal task queue the worker serves.
const TaskQueue = "lakemirror"
