// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IERC8183Hook} from "../../src/IERC8183Hook.sol";
import {IERC165} from "../../src/IERC165.sol";

/// @notice A hook that records every call it gets (before or after, job, selector, data), and
/// reverts on request.
contract RecordingHook is IERC8183Hook {
    struct Call {
        bool before;
        uint256 jobId;
        bytes4 selector;
        bytes data;
        address sender;
    }

    Call[] internal _calls;
    bytes4 public revertOn; // a selector whose calls revert
    bool public revertBefore; // which of its calls: before (true) or after (false)

    error HookSaysNo(bytes4 selector, bool before);

    function setRevert(bytes4 selector, bool before) external {
        revertOn = selector;
        revertBefore = before;
    }

    function beforeAction(uint256 jobId, bytes4 selector, bytes calldata data) external virtual {
        _record(true, jobId, selector, data);
    }

    function afterAction(uint256 jobId, bytes4 selector, bytes calldata data) external virtual {
        _record(false, jobId, selector, data);
    }

    function _record(bool before, uint256 jobId, bytes4 selector, bytes calldata data) internal {
        if (selector == revertOn && before == revertBefore) revert HookSaysNo(selector, before);
        _calls.push(Call(before, jobId, selector, data, msg.sender));
    }

    function count() external view returns (uint256) {
        return _calls.length;
    }

    function callAt(uint256 i) external view returns (Call memory) {
        return _calls[i];
    }

    function supportsInterface(bytes4 id) external view virtual returns (bool) {
        return id == type(IERC8183Hook).interfaceId || id == type(IERC165).interfaceId;
    }
}

/// @notice A hook that, once armed, calls `target` with `data` from one of its callbacks (as
/// a malicious hook re-entering the escrow would) and records how that call ended.
contract ReentrantHook is RecordingHook {
    address public target;
    bytes public payload;
    bytes4 public onSelector;
    bool public onBefore;
    bool public reentryOk;
    bytes public reentryResult;
    uint256 public attempts;

    function arm(address target_, bytes calldata payload_, bytes4 onSelector_, bool onBefore_) external {
        target = target_;
        payload = payload_;
        onSelector = onSelector_;
        onBefore = onBefore_;
    }

    function beforeAction(uint256 jobId, bytes4 selector, bytes calldata data) external override {
        _record(true, jobId, selector, data);
        _maybeReenter(selector, true);
    }

    function afterAction(uint256 jobId, bytes4 selector, bytes calldata data) external override {
        _record(false, jobId, selector, data);
        _maybeReenter(selector, false);
    }

    function _maybeReenter(bytes4 selector, bool before) internal {
        if (target == address(0) || selector != onSelector || before != onBefore) return;
        attempts++;
        (reentryOk, reentryResult) = target.call(payload);
    }

    /// @notice Lets the hook act as a job's party (client, provider, evaluator) in tests.
    function exec(address to, bytes calldata call) external returns (bytes memory) {
        (bool ok, bytes memory ret) = to.call(call);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret;
    }
}

/// @notice Implements the hook's two functions but answers ERC-165 as told.
contract ERC165LiarHook is RecordingHook {
    bool public claimsHook;
    bool public claimsAll;

    constructor(bool claimsHook_, bool claimsAll_) {
        claimsHook = claimsHook_;
        claimsAll = claimsAll_;
    }

    function supportsInterface(bytes4 id) external view override returns (bool) {
        if (claimsAll) return true;
        if (id == type(IERC165).interfaceId) return true;
        return claimsHook && id == type(IERC8183Hook).interfaceId;
    }
}

/// @notice Has no supportsInterface at all.
contract NoERC165 {
    function beforeAction(uint256, bytes4, bytes calldata) external {}
    function afterAction(uint256, bytes4, bytes calldata) external {}
}
