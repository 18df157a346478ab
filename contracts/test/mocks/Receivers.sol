// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @notice A contract account that, when paid ETH, calls `target` again with `data` once and
/// records how that re-entry ended. It can also act (post, claim, withdraw) through `exec`.
contract ReentrantReceiver {
    address public target;
    bytes public data;
    bool public reentered;
    bool public reentryOk;
    bytes public reentryResult;
    uint256 public received;

    function arm(address target_, bytes calldata data_) external {
        target = target_;
        data = data_;
    }

    function exec(address to, uint256 value, bytes calldata call) external payable returns (bytes memory) {
        (bool ok, bytes memory ret) = to.call{value: value}(call);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret;
    }

    receive() external payable {
        received += msg.value;
        if (target != address(0) && !reentered) {
            reentered = true;
            (reentryOk, reentryResult) = target.call(data);
        }
    }
}

/// @notice A contract account that refuses ETH.
contract RejectingReceiver {
    function exec(address to, uint256 value, bytes calldata call) external payable returns (bytes memory) {
        (bool ok, bytes memory ret) = to.call{value: value}(call);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret;
    }

    receive() external payable {
        revert("no ETH here");
    }
}
