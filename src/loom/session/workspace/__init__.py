"""The Workspace, the one front door every face holds, and its sub-APIs (`threads`,
`sync`, `grants`, `decisions`, `repo`); `SessionSpec` is what a face asks for when it
starts a session. Importing this package imports nothing.
"""
